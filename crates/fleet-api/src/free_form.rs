//! `FreeForm`: an opaque JSON value kept verbatim, for Fleet fields this crate does not model
//! (HelmOp chart options). The CRD schema preserves unknown fields under it.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Any JSON value, stored and re-serialized unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FreeForm(pub Value);

impl JsonSchema for FreeForm {
    fn schema_name() -> Cow<'static, str> {
        "FreeForm".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }
}
