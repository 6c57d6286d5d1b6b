/** Resolves at once: in Node the module is ready on import (browsers must `await init()`). */
export default function init(): Promise<void>;

/** Does nothing: in Node the module is ready on import. */
export function initSync(): void;

/** An offload writer that keeps the files in memory; `files` holds them by path. */
export interface MemoryOffloadStore extends OffloadWriter {
  files: Map<string, string>;
}

/** An offload writer that keeps the files in a `Map` (browsers, tests): pass it to `engine.setOffload`. */
export function memoryOffloadStore(): MemoryOffloadStore;

/** Options of `fileOffloadWriter`. */
export interface FileOffloadWriterOptions {
  /** The working directory the offload paths are relative to (default `process.cwd()`). */
  root?: string;
}

/** An offload writer keeping files under a folder, with native ctxkit's safety rules (0700 folders, 0600 files, no symbolic links). Node only. */
export function fileOffloadWriter(options?: FileOffloadWriterOptions): OffloadWriter & { root: string };
