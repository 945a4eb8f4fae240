//! How the agents reach a HelmOp's chart source: as Fleet's Bundle reconciler does for HelmOp bundles, the
//! `helmSecretName` Secret is copied into the namespace of every BundleDeployment of the Bundle (the
//! cluster namespace the agent reads), under the same name, typed `fleet.cattle.io/bundle-helmops-access/
//! v1alpha1`, labelled `fleet.cattle.io/bundle-internal-secret`, and owned by the BundleDeployment (so it
//! goes with it). The agent reads it by the name in the BundleDeployment's `helmChartOptions`. A copy is
//! written only when it is not known to hold the current data.

use std::collections::BTreeMap;

use fleet_api::{BundleDeployment, INTERNAL_SECRET_LABEL, SECRET_TYPE_HELMOPS_ACCESS};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::context::{Context, FIELD_MANAGER, lock};
use crate::error::Result;

pub use super::state::Written;

/// The Secret copy for `bd`, with `source`'s type-independent data.
pub fn copy_for(source: &Secret, bd: &BundleDeployment) -> Secret {
    let owner = OwnerReference {
        api_version: fleet_api::API_VERSION.to_string(),
        kind: "BundleDeployment".to_string(),
        name: bd.name_any(),
        uid: bd.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let mut copy = Secret {
        data: source.data.clone(),
        type_: Some(SECRET_TYPE_HELMOPS_ACCESS.to_string()),
        ..Secret::default()
    };
    copy.metadata.name = source.metadata.name.clone();
    copy.metadata.namespace = bd.namespace();
    copy.metadata.labels = Some(BTreeMap::from([(
        INTERNAL_SECRET_LABEL.to_string(),
        "true".to_string(),
    )]));
    copy.metadata.owner_references = Some(vec![owner]);
    copy
}

fn data_hash(secret: &Secret) -> String {
    let mut hash = Sha256::new();
    for (key, value) in secret.data.iter().flatten() {
        hash.update((key.len() as u64).to_le_bytes());
        hash.update(key.as_bytes());
        hash.update((value.0.len() as u64).to_le_bytes());
        hash.update(&value.0);
    }
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Makes sure each of `deployments` has its copy of `source`.
pub async fn ensure(
    ctx: &Context,
    written: &Written,
    source: &Secret,
    deployments: &[BundleDeployment],
) -> Result<()> {
    let hash = data_hash(source);
    let name = source.name_any();
    for bd in deployments {
        let namespace = bd.namespace().unwrap_or_default();
        let uid = bd.meta().uid.clone().unwrap_or_default();
        let key = (namespace.clone(), name.clone());
        if lock(written).get(&key) == Some(&(uid.clone(), hash.clone())) {
            continue;
        }
        let mut copy = serde_json::to_value(copy_for(source, bd)).unwrap_or_default();
        copy["apiVersion"] = json!("v1");
        copy["kind"] = json!("Secret");
        Api::<Secret>::namespaced(ctx.client.clone(), &namespace)
            .patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&copy),
            )
            .await?;
        lock(written).insert(key, (uid, hash.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn the_copy_is_fleets_helmops_access_secret_owned_by_the_bundle_deployment() {
        let mut source = Secret {
            data: Some(BTreeMap::from([(
                "password".to_string(),
                ByteString(b"pw".to_vec()),
            )])),
            type_: Some("Opaque".to_string()),
            ..Secret::default()
        };
        source.metadata.name = Some("creds".into());
        source.metadata.namespace = Some("fleet-default".into());
        let mut bd = BundleDeployment::new("web", Default::default());
        bd.metadata.namespace = Some("cluster-fleet-default-c1".into());
        bd.metadata.uid = Some("u-1".into());
        let copy = copy_for(&source, &bd);
        assert_eq!(copy.metadata.name.as_deref(), Some("creds"));
        assert_eq!(
            copy.metadata.namespace.as_deref(),
            Some("cluster-fleet-default-c1")
        );
        assert_eq!(copy.type_.as_deref(), Some(SECRET_TYPE_HELMOPS_ACCESS));
        assert_eq!(copy.data, source.data);
        assert_eq!(copy.metadata.labels.unwrap()[INTERNAL_SECRET_LABEL], "true");
        let owner = &copy.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("BundleDeployment", "web", "u-1")
        );
        assert_eq!(owner.controller, Some(true));
        let mut changed = source.clone();
        changed.data = Some(BTreeMap::from([(
            "password".to_string(),
            ByteString(b"other".to_vec()),
        )]));
        assert_ne!(data_hash(&source), data_hash(&changed));
    }
}
