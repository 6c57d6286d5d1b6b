
/** An offload writer that keeps the files in memory; `files` holds them by path. */
export interface MemoryOffloadStore extends OffloadWriter {
  files: Map<string, string>;
}

/** An offload writer that keeps the files in a `Map` (browsers, tests): pass it to `engine.setOffload`. */
export function memoryOffloadStore(): MemoryOffloadStore;
