//! [`read`] against serde's derived reader, input by input, through serde_json's text reader,
//! its `Value` reader and serde's buffered content (an internally tagged enum's field).

use serde::Deserialize;
use serde_json::{json, Value};

/// Derived, as the enums were.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Derived {
    First,
    SecondOne,
    #[serde(rename = "third-3")]
    Third,
}

/// The same enum through [`read`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hand {
    First,
    SecondOne,
    Third,
}

unit_enum_deserialize!(
    Hand,
    "Derived",
    [First = "first", SecondOne = "second_one", Third = "third-3"]
);

/// An internally tagged enum holding each, so the enum is read from serde's buffered content.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(tag = "type")]
enum Tagged<T> {
    Holds { value: T },
}

fn same(input: &Value) {
    let text = input.to_string();
    let from_text = |derived: bool| -> String {
        if derived {
            format!(
                "{:?}",
                serde_json::from_str::<Derived>(&text).map_err(|e| e.to_string())
            )
        } else {
            format!(
                "{:?}",
                serde_json::from_str::<Hand>(&text).map_err(|e| e.to_string())
            )
        }
        .replace("Hand", "Derived")
    };
    assert_eq!(from_text(false), from_text(true), "text {text}");
    let hand = serde_json::from_value::<Hand>(input.clone()).map_err(|e| e.to_string());
    let derived = serde_json::from_value::<Derived>(input.clone()).map_err(|e| e.to_string());
    assert_eq!(
        format!("{hand:?}").replace("Hand", "Derived"),
        format!("{derived:?}"),
        "value {text}"
    );
    let tagged = json!({"type": "Holds", "value": input});
    let hand = serde_json::from_value::<Tagged<Hand>>(tagged.clone()).map_err(|e| e.to_string());
    let derived = serde_json::from_value::<Tagged<Derived>>(tagged).map_err(|e| e.to_string());
    assert_eq!(
        format!("{hand:?}").replace("Hand", "Derived"),
        format!("{derived:?}"),
        "tagged {text}"
    );
}

#[test]
fn reads_as_the_derived_reader() {
    for input in [
        json!("first"),
        json!("second_one"),
        json!("third-3"),
        json!("SecondOne"),
        json!("third"),
        json!(""),
        json!(0),
        json!(2),
        json!(3),
        json!(-1),
        json!(1.5),
        json!(null),
        json!(true),
        json!([]),
        json!(["first"]),
        json!({}),
        json!({"first": null}),
        json!({"first": 1}),
        json!({"fourth": null}),
        json!({"first": null, "third-3": null}),
    ] {
        same(&input);
    }
}
