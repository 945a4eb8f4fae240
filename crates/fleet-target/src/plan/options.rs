//! Each target's options with their deploymentID, hashed once per distinct option set (most
//! targets of a Bundle share a few).

use std::cell::RefCell;
use std::sync::Arc;

use fleet_api::{BundleDeploymentOptions, BundleResource};

use crate::targeting::Target;

/// The hashes of the bundle crate (Go-JSON rules): a Bundle's manifest ID from its resources, and a
/// BundleDeployment's deploymentID from the manifest ID and its options.
#[derive(Debug, Clone, Copy)]
pub struct Hashes {
    pub manifest_id: fn(&[BundleResource]) -> String,
    pub deployment_id: fn(&str, &BundleDeploymentOptions) -> String,
}

/// A target's options as Fleet's type with their deploymentID.
#[derive(Clone)]
pub struct TypedOptions {
    pub options: Arc<BundleDeploymentOptions>,
    pub deployment_id: String,
}

/// How many of the first distinct option sets a target's options are compared with (most targets
/// of a Bundle share a few); a target whose options are none of these gets a set of its own, so
/// per-cluster templated options cost no quadratic comparison.
const MEMO_LIMIT: usize = 16;

/// The options and deploymentID of the option sets targeting produced, so that targets with the
/// same options (most of them: options differ only by customization or templated values) are
/// hashed once, not once per cluster.
pub struct OptionSets<'a> {
    pub(super) manifest_id: &'a str,
    deployment_id: fn(&str, &BundleDeploymentOptions) -> String,
    sets: RefCell<Vec<TypedOptions>>,
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
    pub fn index_of(&self, target: &Target) -> usize {
        let mut sets = self.sets.borrow_mut();
        if let Some(i) = sets
            .iter()
            .take(MEMO_LIMIT)
            .position(|set| *set.options == target.options)
        {
            return i;
        }
        sets.push(TypedOptions {
            deployment_id: (self.deployment_id)(self.manifest_id, &target.options),
            options: Arc::new(target.options.clone()),
        });
        sets.len() - 1
    }

    /// `target`'s deploymentID.
    pub fn deployment_id(&self, target: &Target) -> String {
        let i = self.index_of(target);
        self.sets.borrow()[i].deployment_id.clone()
    }

    pub fn into_typed(self) -> Vec<TypedOptions> {
        self.sets.into_inner()
    }
}
