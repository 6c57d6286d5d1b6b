//! Throughput of the default text estimator on one core: ASCII English prose, mixed code and
//! CJK text, 1 MiB each, and `estimate_messages` over a conversation of tool calls and results. `cargo bench -p ctxkit-core --bench estimator`; the report program
//! (`cargo run --release -p ctxkit-tests --example estimator_report`) copies the figures into
//! docs/reports/estimator.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ctxkit_core::tokens::{estimate_messages, estimate_text, message_bytes, ModelFamily};
use ctxkit_core::{Message, ToolCall};
use std::hint::black_box;

const SIZE: usize = 1 << 20;

const ENGLISH: &str =
    "The agent keeps the complete log of its session, and before every model call the \
kernel decides what the model sees. Old tool outputs are replaced by short references to files, \
the summary of earlier turns comes first, and nothing is ever lost from the log itself. ";

const CODE: &str = "fn estimate(messages: &[Message], family: ModelFamily) -> u64 {\n    \
messages.iter().map(|m| estimate_message(m, family)).sum()\n}\n\
{\"id\": \"call_8f2a\", \"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\", \"limit\": 200}}\n\
    42→    if total > budget * 9 / 10 { compact(&mut view)?; }\n";

const CJK: &str = "我们的应用在收到每一条消息后，都会立刻把它保存到本地数据库里，这样即使程序崩溃也不会丢失任何内容。\
モデルを呼び出す前に、コアは会話履歴のどの部分がコンテキストウィンドウに収まるかを計算します。";

fn repeat_to(text: &str, size: usize) -> String {
    let mut out = String::with_capacity(size + text.len());
    while out.len() < size {
        out.push_str(text);
    }
    out
}

fn bench_estimator(c: &mut Criterion) {
    let mut group = c.benchmark_group("estimator");
    for (name, text) in [
        ("ascii_english", ENGLISH),
        ("mixed_code", CODE),
        ("cjk", CJK),
    ] {
        let input = repeat_to(text, SIZE);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| estimate_text(black_box(&input), ModelFamily::OpenAi))
        });
    }
    // A conversation: 1 KiB tool results answering tool calls, 1 MiB of text in all.
    let result = repeat_to(CODE, 1024);
    let messages: Vec<Message> = (0..SIZE / 1024)
        .map(|index| {
            if index % 2 == 0 {
                let call = ToolCall::new(
                    format!("call_{index}"),
                    "read_file",
                    r#"{"path":"src/lib.rs"}"#,
                );
                Message::assistant("Reading the file.", vec![call])
            } else {
                Message::tool_result(format!("call_{}", index - 1), result.clone(), false)
            }
        })
        .collect();
    let bytes: usize = messages.iter().map(message_bytes).sum::<u64>() as usize;
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("messages", |b| {
        b.iter(|| estimate_messages(black_box(&messages), ModelFamily::Claude))
    });
    group.finish();
}

criterion_group!(benches, bench_estimator);
criterion_main!(benches);
