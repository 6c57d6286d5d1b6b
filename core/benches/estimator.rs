//! Throughput of the default text estimator on one core: ASCII English prose, mixed code and
//! CJK text, 1 MiB each. `cargo bench -p ctxkit-core --bench estimator`; the report program
//! (`cargo run --release -p ctxkit-tests --example estimator_report`) copies the figures into
//! docs/estimator.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ctxkit_core::tokens::{bytes4_message, estimate_text, ModelFamily};
use ctxkit_core::Message;
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
    let english = Message::user(repeat_to(ENGLISH, SIZE));
    group.throughput(Throughput::Bytes(SIZE as u64));
    group.bench_function("bytes4_english", |b| {
        b.iter(|| bytes4_message(black_box(&english)))
    });
    group.finish();
}

criterion_group!(benches, bench_estimator);
criterion_main!(benches);
