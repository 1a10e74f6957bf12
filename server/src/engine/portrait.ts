// The built-in engine's portrait of an avatar: a DiceBear "personas" drawing (SVG) whose
// features follow the avatar's inputs. A props avatar's sex, age and ethnicity choose
// from the features that fit them; every other choice, and all of a prompt or photo
// avatar's, comes from a seed made of the inputs, so the same inputs always give the
// same portrait. A stand-in for a model: coarse on purpose, never a likeness.
import { createAvatar, type Style, type StyleOptions } from '@dicebear/core';
import * as personas from '@dicebear/personas';
import { stringify } from 'safe-stable-stringify';
import type { AvatarInput } from '../domain/model.ts';

/** Pixels on a side of the preview: what a page shows an avatar at. */
export const PORTRAIT_SIZE = 512;

type Options = StyleOptions<typeof personas extends Style<infer O> ? O : never>;

/** Skin tones of the style's palette, light to dark; each ethnicity draws from a span of them. */
const SKIN = ['eeb4a4', 'e7a391', 'e5a07e', 'd78774', 'b16a5b', '92594b', '623d36'];
const SKIN_SPAN: Record<string, readonly string[]> = {
  Asian: SKIN.slice(0, 3),
  'South Asian': SKIN.slice(3, 6),
  'Southeast Asian': SKIN.slice(2, 5),
  Black: SKIN.slice(5, 7),
  Hispanic: SKIN.slice(2, 5),
  'Middle Eastern': SKIN.slice(2, 5),
  White: SKIN.slice(0, 2),
  Wasian: SKIN.slice(0, 3),
};

type Hair = NonNullable<Options['hair']>[number];
const HAIR: Record<'male' | 'female', Hair[]> = {
  male: ['shortCombover', 'buzzcut', 'fade', 'sideShave', 'curlyHighTop', 'shortComboverChops', 'mohawk'],
  female: ['long', 'bobCut', 'curly', 'curlyBun', 'bobBangs', 'straightBun', 'extraLong', 'bunUndercut'],
};
/** Hair thins with age: from 60 the style may be balding, from 75 bald. */
const OLDER_HAIR: Record<'male' | 'female', Hair[]> = { male: ['balding', 'bald', 'shortCombover'], female: ['bobCut', 'straightBun', 'curlyBun'] };

/** Hair colours: young ones, then greying from 50 and white from 70. */
const YOUNG_HAIR_COLOUR = ['362c47', '6c4545', 'e15c66', 'f27d65', 'f29c65'];
const GREYING = ['8e8b99', 'a9a6b5'];
const WHITE = ['dee1f5'];

function hairColour(age: number): string[] {
  if (age >= 70) return WHITE;
  if (age >= 50) return GREYING;
  return YOUNG_HAIR_COLOUR;
}

/** What every choice not made by an avatar's props is seeded from: its inputs, written the same way whatever their order. */
export const avatarSeed = (input: AvatarInput): string => stringify(input) ?? '';

/** The drawing's options for an avatar's inputs. */
export function portraitOptions(input: AvatarInput): Options {
  // A presenter's face: eyes open, a pleasant mouth (no sunglasses, no frown).
  const base: Options = {
    seed: avatarSeed(input),
    size: PORTRAIT_SIZE,
    backgroundColor: ['e8edf3'],
    radius: 0,
    eyes: ['open', 'happy', 'glasses'],
    mouth: ['smile', 'bigSmile', 'smirk', 'lips'],
  };
  if (input.type !== 'props') return base;
  const sex = input.sex === 'female' ? 'female' : 'male';
  const age = input.age ?? 35;
  return {
    ...base,
    skinColor: [...(SKIN_SPAN[input.ethnicity ?? ''] ?? SKIN)],
    hair: age >= 60 ? OLDER_HAIR[sex] : HAIR[sex],
    hairColor: hairColour(age),
    facialHairProbability: sex === 'male' ? (age >= 40 ? 60 : 25) : 0,
  };
}

/** Mouths of a speaking portrait (videos): open, and rounded as for an "o"; other ones when the face's own mouth is one of them. */
const SPEAKING_MOUTH = { open: 'bigSmile', round: 'surprise' } as const;
const SPEAKING_MOUTH_WHEN_BIG_SMILE = { open: 'surprise', round: 'lips' } as const;

/**
 * The portrait of an avatar as SVG: the preview's drawing, or the same face speaking, its
 * mouth open or rounded (never the mouth it has at rest, so that speech shows). Only the
 * mouth changes: the style draws every feature from the seed in the same order whatever
 * the choices offered, so the rest of the face stays as it is.
 */
export function portraitSvg(input: AvatarInput, mouth?: keyof typeof SPEAKING_MOUTH): string {
  const options = portraitOptions(input);
  const face = createAvatar(personas, options);
  if (!mouth) return face.toString();
  const speaking = face.toJson().extra.mouth === 'bigSmile' ? SPEAKING_MOUTH_WHEN_BIG_SMILE : SPEAKING_MOUTH;
  return createAvatar(personas, { ...options, mouth: [speaking[mouth]] }).toString();
}
