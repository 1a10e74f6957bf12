// The part of `espeak-ng` (eSpeak NG's command line, compiled to WebAssembly by
// Emscripten) that speech.ts uses; the package ships no types.
declare module 'espeak-ng' {
  interface EmscriptenFs {
    writeFile(path: string, data: string | Uint8Array): void;
    readFile(path: string): Uint8Array;
  }

  export interface ESpeakNgOptions {
    /** The command line, as `espeak-ng` takes it; the program runs once, when the module starts. */
    arguments: string[];
    preRun?: ((module: { FS: EmscriptenFs }) => void)[];
    print?: (line: string) => void;
    printErr?: (line: string) => void;
    quit?: (status: number, toThrow: unknown) => void;
    /** Instantiates the module's WebAssembly with `imports` (which it may change) and hands the instance to `done`. */
    instantiateWasm?: (imports: Record<string, Record<string, unknown>>, done: (instance: object, module: object) => void) => object;
  }

  export interface ESpeakNgModule {
    FS: EmscriptenFs;
  }

  export default function ESpeakNg(options: ESpeakNgOptions): Promise<ESpeakNgModule>;
}
