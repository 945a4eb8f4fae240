//! `replicas`: setting replica counts on workloads selected by name.

use serde_json::Value;

use crate::fieldspec::{TransformerConfig, visit};
use crate::kustomization::Replica;
use crate::resource::Resource;

/// Sets `count` on every resource that has (or had) the name `replica.name`.
pub fn set_replicas(resources: &mut [Resource], replica: &Replica, cfg: &TransformerConfig) {
    for r in resources.iter_mut() {
        let named = r.name() == replica.name || r.history().any(|id| id.name == replica.name);
        if !named {
            continue;
        }
        let gvk = r.gvk();
        for fs in cfg.replicas.iter().filter(|fs| fs.applies_to(&gvk)) {
            let _ = visit::<()>(&mut r.obj, &fs.path, fs.create, &mut |v| {
                *v = Value::from(replica.count);
                Ok(())
            });
        }
    }
}
