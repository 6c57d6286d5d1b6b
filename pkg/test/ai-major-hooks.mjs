// A module resolve hook for the conformance suite (test/conformance.test.mjs): a module loaded
// with `?ai=5` at the end of its URL gets `ai` (and `ai/...`) resolved to the AI SDK 5 install
// (the `ai5` alias among the dev dependencies), so one run loads ctxkit/ai-sdk twice, once over
// each major, as a project with only that major installed would load it. Each redirect is
// posted to the port given at registration, so the suite can check that it happened.
let port = null;

export function initialize(data) {
  port = data?.port ?? null;
}

export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('?ai=5') && (specifier === 'ai' || specifier.startsWith('ai/'))) {
    const resolved = await next(`ai5${specifier.slice(2)}`, context);
    port?.postMessage({ from: context.parentURL, specifier, url: resolved.url });
    return resolved;
  }
  return next(specifier, context);
}
