//! The core's options schema and defaults as JavaScript sees them
//! (`optionSchema()`, `defaults()`): the worker and connect options omitted
//! by a caller take exactly these defaults, filled in Rust; `index.js`
//! derives its allow-list of option names from the schema, and the tests
//! check the documented options against it.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::option_schema::{self as schema, OptionDefault, OptionType};

use crate::convert::{num, promise};

/// Every default the core declares, by camelCase name: each option's from
/// the options schema (`null` for an unset one), then the verbs' limits.
#[napi(ts_return_type = "Record<string, number | boolean | string | null>")]
pub fn defaults(env: &Env) -> Result<Object<'_>> {
    let mut out = Object::new(env)?;
    for (name, default) in schema::defaults() {
        set_default(&mut out, &schema::camel_case(name), default)?;
    }
    Ok(out)
}

fn set_default(out: &mut Object<'_>, key: &str, default: OptionDefault) -> Result<()> {
    match default {
        OptionDefault::Int(n) => out.set(key, num(n)),
        OptionDefault::Bool(b) => out.set(key, b),
        OptionDefault::Text(t) => out.set(key, t),
        OptionDefault::Unset => out.set(key, Null),
    }
}

/// One row of the core's options schema (`optionSchema()`).
#[napi(object)]
pub struct OptionSpecJs {
    /// snake_case, as in the core, Python and C.
    pub name: String,
    /// The camelCase name Node takes.
    pub js_name: String,
    /// `connect` or `worker`.
    pub group: String,
    /// `int`, `ms`, `bytes`, `bool`, `string` or `enum`.
    #[napi(js_name = "type")]
    pub kind: String,
    /// An `enum`'s names.
    pub values: Option<Vec<String>>,
    /// The default; absent when unset (`index.js` answers `null`).
    #[napi(js_name = "default")]
    pub default_value: Option<Either3<f64, bool, String>>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub doc: String,
}

/// The core's options schema: every connect and worker option.
#[napi]
pub fn option_schema() -> Vec<OptionSpecJs> {
    schema::OPTIONS
        .iter()
        .map(|o| OptionSpecJs {
            name: o.name.to_string(),
            js_name: o.js_name(),
            group: o.group.as_str().to_string(),
            kind: o.kind.as_str().to_string(),
            values: match o.kind {
                OptionType::OneOf(names) => Some(names.iter().map(|n| n.to_string()).collect()),
                _ => None,
            },
            default_value: match o.default {
                OptionDefault::Int(n) => Some(Either3::A(num(n))),
                OptionDefault::Bool(b) => Some(Either3::B(b)),
                OptionDefault::Text(t) => Some(Either3::C(t.to_string())),
                OptionDefault::Unset => None,
            },
            min: o.min.map(num),
            max: o.max.map(num),
            doc: o.doc.to_string(),
        })
        .collect()
}

/// Test-only: a Promise whose core future panics, to prove it rejects with
/// `EMQ_INTERNAL` (and the process can still exit) instead of hanging.
#[napi(js_name = "_panicInCoreForTests")]
pub fn panic_in_core_for_tests(env: &Env) -> Result<PromiseRaw<'_, ()>> {
    promise(
        env,
        async {
            panic!("injected by _panicInCoreForTests");
            #[allow(unreachable_code)]
            Ok(())
        },
        |_, ()| Ok(()),
    )
}
