// What the receiver and proxy commands share in reading their flags: a usage error (exit
// 2, one line naming the flag) and an implementation profile read as one, so that a bad
// profile file is reported the same way whichever command was given it.
import { loadProfile, ProfileError, type ImplementationProfile } from './implementation/profile.ts';

export class Usage extends Error {}

/** The profile in `file`; a file that is no valid profile is a usage error with the loader's message. */
export function profileFlag(file: string): ImplementationProfile {
  try {
    return loadProfile(file);
  } catch (error) {
    if (error instanceof ProfileError) throw new Usage(error.message);
    throw error;
  }
}
