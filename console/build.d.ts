// Types of console/build.js for the service's TypeScript (src/modules/console/assets.ts).

export interface ConsoleFile {
  /** Relative to the console's root: `index.html` or `assets/<name>-<hash>.<ext>`. */
  name: string;
  contents: Buffer;
}

export function buildConsole(esbuild: unknown, root: string): Promise<ConsoleFile[]>;
