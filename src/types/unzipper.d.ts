// The `unzipper` package (0.10, exceljs's own zip reader) ships no types: these cover only what Tern uses.
declare module 'unzipper' {
  import type { PassThrough, Transform } from 'node:stream';

  /** One part of the zip as its local header announces it; reading it inflates it. */
  export interface Entry extends PassThrough {
    path: string;
    /** The header's sizes: 0 when the sizes follow the data (a data descriptor). */
    vars: { compressedSize: number; uncompressedSize: number };
    autodrain(): void;
  }

  /** With `forceStream`, a readable stream of entries in the order of the file. */
  export function Parse(options?: { forceStream?: boolean }): Transform;

  const unzipper: { Parse: typeof Parse };
  export default unzipper;
}
