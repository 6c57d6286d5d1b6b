
// The WebAssembly types the init functions name, declared so that the typings need no `dom`
// lib (they merge with the DOM's or @types/node's own declarations when those are present).
declare global {
  namespace WebAssembly {
    interface Module {}
    interface Memory {}
    interface Table {}
  }
}
