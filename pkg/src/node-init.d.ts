
/** Resolves at once: in Node the module is ready on import (browsers must `await init()`). */
export default function init(): Promise<void>;

/** Does nothing: in Node the module is ready on import. */
export function initSync(): void;
