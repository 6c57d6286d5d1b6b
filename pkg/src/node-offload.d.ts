
/** Options of `fileOffloadWriter`. */
export interface FileOffloadWriterOptions {
  /** The working directory the offload paths are relative to (default `process.cwd()`). */
  root?: string;
}

/** An offload writer keeping files under a folder, with native ctxkit's safety rules (0700 folders, 0600 files, no symbolic links). Node only. */
export function fileOffloadWriter(options?: FileOffloadWriterOptions): OffloadWriter & { root: string };
