//! Adding label and annotation pairs at the fields configured for them (`commonLabels`, `labels`,
//! `commonAnnotations`, generator options).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fieldspec::{FieldSpec, visit};
use crate::resource::Resource;

/// Sets every pair in the string maps reached by `specs`, creating maps where the spec says so.
pub fn add_pairs(
    resources: &mut [Resource],
    pairs: &BTreeMap<String, String>,
    specs: &[FieldSpec],
    file: &str,
) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        for fs in specs.iter().filter(|fs| fs.applies_to(&gvk)) {
            let mut not_a_map = false;
            let _ = visit::<()>(&mut r.obj, &fs.path, fs.create, &mut |v| {
                if v.is_null() {
                    *v = Value::Object(Map::new());
                }
                match v {
                    Value::Object(map) => {
                        for (k, val) in pairs {
                            map.insert(k.clone(), Value::String(val.clone()));
                        }
                    }
                    _ => not_a_map = true,
                }
                Ok(())
            });
            if not_a_map {
                return Err(Error::invalid(
                    file,
                    format!(
                        "{}: field {} is not a mapping; cannot add labels or annotations",
                        r.id().describe(),
                        fs.path.join(".")
                    ),
                ));
            }
        }
    }
    Ok(())
}
