//! Leader election with a `coordination.k8s.io/v1` Lease: one controller process reconciles at a time.
//! A candidate takes the Lease when it is free or its holder stopped renewing for `leaseDurationSeconds`;
//! the leader renews it every third of that, and steps down (its run ends) when a renewal fails or
//! another holder took over. Writes use the Lease's resourceVersion, so two candidates cannot both win.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

use crate::error::Result;

/// The Lease's name (Fleet's controller uses the same).
pub const LEASE_NAME: &str = "fleet-controller";

/// One candidate for the Lease `namespace/name`.
pub struct LeaderElection {
    api: Api<Lease>,
    name: String,
    identity: String,
    duration: Duration,
}

impl LeaderElection {
    pub fn new(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
        duration: Duration,
    ) -> Self {
        LeaderElection {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: identity.to_string(),
            duration,
        }
    }

    /// Waits until this candidate holds the Lease.
    pub async fn acquire(&self) -> Result<()> {
        loop {
            if self.try_take().await? {
                tracing::info!(lease = %self.name, identity = %self.identity, "became leader");
                return Ok(());
            }
            tokio::time::sleep(self.duration / 3).await;
        }
    }

    /// Renews the Lease until that fails or someone else holds it; returns then (leadership lost).
    pub async fn hold(&self) {
        loop {
            tokio::time::sleep(self.duration / 3).await;
            match self.try_take().await {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => {
                    tracing::warn!(error = %err, "renewing the lease failed");
                    break;
                }
            }
        }
        tracing::warn!(lease = %self.name, "leadership lost");
    }

    /// Takes or renews the Lease if it is ours or expired; `false` when another holder has it.
    pub async fn try_take(&self) -> Result<bool> {
        let now = Timestamp::now();
        let seconds = self.duration.as_secs().max(1) as i32;
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now, seconds, 0, Some(MicroTime(now)))),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(err) => Err(err.into()),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let ours = spec.holder_identity.as_deref() == Some(self.identity.as_str());
        if !ours && !expired(&spec, now, seconds) {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0) + i32::from(!ours);
        let acquired = if ours {
            spec.acquire_time.clone()
        } else {
            Some(MicroTime(now))
        };
        lease.spec = Some(self.spec(now, seconds, transitions, acquired));
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    fn spec(
        &self,
        now: Timestamp,
        seconds: i32,
        transitions: i32,
        acquired: Option<MicroTime>,
    ) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds),
            acquire_time: acquired,
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

/// Whether `spec`'s holder stopped renewing: `leaseDurationSeconds` (else `default_seconds`) have passed since
/// its `renewTime`, at the time's full precision (whole seconds would let a lease expire up to a second early).
fn expired(spec: &LeaseSpec, now: Timestamp, default_seconds: i32) -> bool {
    spec.renew_time.as_ref().is_none_or(|MicroTime(renewed)| {
        let held_for = i64::from(spec.lease_duration_seconds.unwrap_or(default_seconds));
        now.as_microsecond() - renewed.as_microsecond() >= held_for * 1_000_000
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renewed_at(time: &str, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            renew_time: Some(MicroTime(time.parse().unwrap())),
            lease_duration_seconds: Some(seconds),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn a_lease_expires_its_full_duration_after_its_renewal() {
        let at = |time: &str| time.parse::<Timestamp>().unwrap();
        let spec = renewed_at("2026-01-01T00:00:10.999Z", 1);
        // Two milliseconds later, across a second boundary: still held.
        assert!(!expired(&spec, at("2026-01-01T00:00:11.001Z"), 1));
        assert!(!expired(&spec, at("2026-01-01T00:00:11.998999Z"), 1));
        assert!(expired(&spec, at("2026-01-01T00:00:11.999Z"), 1));
        // The lease's own duration counts, not the candidate's.
        let long = renewed_at("2026-01-01T00:00:00Z", 15);
        assert!(!expired(&long, at("2026-01-01T00:00:14.5Z"), 1));
        assert!(expired(&long, at("2026-01-01T00:00:15Z"), 1));
        // Never renewed: free.
        assert!(expired(
            &LeaseSpec::default(),
            at("2026-01-01T00:00:00Z"),
            1
        ));
    }
}
