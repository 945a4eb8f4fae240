//! Each target's options as Fleet's type with their deploymentID, converted and hashed once per
//! distinct option set (most targets of a Bundle share a few).

use std::cell::RefCell;
use std::sync::Arc;

use fleet_api::{BundleDeploymentOptions, BundleResource};

use crate::TargetError;
use crate::targeting::Target;

/// The hashes of the bundle crate (Go-JSON rules): a Bundle's manifest ID from its resources, and a
/// BundleDeployment's deploymentID from the manifest ID and its options.
#[derive(Debug, Clone, Copy)]
pub struct Hashes {
    pub manifest_id: fn(&[BundleResource]) -> String,
    pub deployment_id: fn(&str, &BundleDeploymentOptions) -> String,
}

/// A target's merged, templated options as Fleet's type.
fn options_of(target: &Target) -> Result<BundleDeploymentOptions, TargetError> {
    serde_json::from_value(serde_json::Value::Object(target.options.clone())).map_err(|e| {
        TargetError::invalid(format!("targets[{}]", target.target_name), e.to_string())
    })
}

/// A target's options as Fleet's type with their deploymentID.
#[derive(Clone)]
pub struct TypedOptions {
    pub options: Arc<BundleDeploymentOptions>,
    pub deployment_id: String,
}

/// Distinct option sets recognised by comparison (most targets of a Bundle share a few); a target
/// whose options are none of these gets a set of its own.
const MEMO_LIMIT: usize = 16;

/// The typed options and deploymentID of the option sets targeting produced, so that targets with the
/// same options (most of them: options differ only by customization or templated values) are converted
/// and hashed once, not once per cluster.
pub struct OptionSets<'a> {
    pub(super) manifest_id: &'a str,
    deployment_id: fn(&str, &BundleDeploymentOptions) -> String,
    sets: RefCell<Sets>,
}

/// The typed sets, and the options of the first [`MEMO_LIMIT`] of them as targeting produced them.
#[derive(Default)]
struct Sets {
    typed: Vec<TypedOptions>,
    seen: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl<'a> OptionSets<'a> {
    /// Sets of a Bundle whose manifest ID is `manifest_id`, hashed with `deployment_id`.
    pub fn new(
        manifest_id: &'a str,
        deployment_id: fn(&str, &BundleDeploymentOptions) -> String,
    ) -> Self {
        OptionSets {
            manifest_id,
            deployment_id,
            sets: RefCell::default(),
        }
    }

    /// The index of `target`'s option set, added when new.
    pub fn index_of(&self, target: &Target) -> Result<usize, TargetError> {
        let mut sets = self.sets.borrow_mut();
        let Sets { typed, seen } = &mut *sets;
        if let Some(i) = seen.iter().position(|options| *options == target.options) {
            return Ok(i);
        }
        let options = options_of(target)?;
        typed.push(TypedOptions {
            deployment_id: (self.deployment_id)(self.manifest_id, &options),
            options: Arc::new(options),
        });
        if seen.len() + 1 == typed.len() && seen.len() < MEMO_LIMIT {
            seen.push(target.options.clone());
        }
        Ok(typed.len() - 1)
    }

    /// `target`'s deploymentID.
    pub fn deployment_id(&self, target: &Target) -> Result<String, TargetError> {
        let i = self.index_of(target)?;
        Ok(self.sets.borrow().typed[i].deployment_id.clone())
    }

    pub fn into_typed(self) -> Vec<TypedOptions> {
        self.sets.into_inner().typed
    }
}
