//! Fleet's content and deployment identities: the manifest ID (`s-` + sha256 of the Go-JSON encoding of the
//! resources, cut to 63 characters) and the deploymentID (manifest ID + `:` + sha256 of the options' Go-JSON).

use fleet_api::{BundleDeploymentOptions, BundleResource};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Longest Kubernetes name: manifest IDs are cut to it.
const MAX_NAME_LEN: usize = 63;

#[derive(Serialize)]
struct Manifest<'a> {
    #[serde(skip_serializing_if = "<[BundleResource]>::is_empty")]
    resources: &'a [BundleResource],
}

/// The bytes Fleet hashes and stores (gzipped) in a Content object: `json.Encoder` output, newline included.
pub fn manifest_bytes(resources: &[BundleResource]) -> Vec<u8> {
    encode_like_go_encoder(&Manifest { resources })
}

/// Go's `json.NewEncoder(w).Encode(v)`: compact, HTML-escaped, followed by `\n`.
fn encode_like_go_encoder<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing our own plain data types cannot fail (no non-string map keys, no failing Serialize impls).
    let mut text = fleet_api::go_json::to_string(value).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

/// Hex sha256 of the manifest bytes (the Content object's `sha256sum`).
pub fn manifest_sha256(resources: &[BundleResource]) -> String {
    hex::encode(Sha256::digest(manifest_bytes(resources)))
}

/// `s-` + the manifest's sha256, cut to 63 characters.
pub fn manifest_id(resources: &[BundleResource]) -> String {
    let mut id = format!("s-{}", manifest_sha256(resources));
    id.truncate(MAX_NAME_LEN);
    id
}

/// Hex sha256 of the options as Fleet hashes them: `diff` and `correctDrift` cleared, Go-JSON encoded.
pub fn options_hash(options: &BundleDeploymentOptions) -> String {
    let mut hashed = options.clone();
    hashed.diff = None;
    hashed.correct_drift = None;
    hex::encode(Sha256::digest(encode_like_go_encoder(&hashed)))
}

/// `manifestID:optionsHash`, the deploymentID of a BundleDeployment.
pub fn deployment_id(manifest_id: &str, options: &BundleDeploymentOptions) -> String {
    format!("{manifest_id}:{}", options_hash(options))
}

#[cfg(test)]
mod tests {
    use fleet_api::{CorrectDrift, DiffOptions, GenericMap, HelmOptions};
    use serde_json::json;

    use super::*;

    fn reference_options() -> BundleDeploymentOptions {
        let Some(values) = json!({"name": "example-value"}).as_object().cloned() else {
            unreachable!("literal object")
        };
        BundleDeploymentOptions {
            helm: Some(HelmOptions {
                chart: "config-chart".into(),
                values: Some(GenericMap(values)),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn deployment_id_matches_fleet_vector() {
        // Fleet's integrationtests/cli/assets/bundledeployment/bd.yaml.
        let expected = "c32e813ecbf48f56833aa2267cd3d8758eecc94f9948fb0dea510147a57760b5";
        assert_eq!(options_hash(&reference_options()), expected);
        assert_eq!(
            deployment_id("s-abc", &reference_options()),
            format!("s-abc:{expected}")
        );
    }

    #[test]
    fn diff_and_correct_drift_do_not_change_the_hash() {
        let mut options = reference_options();
        options.diff = Some(DiffOptions::default());
        options.correct_drift = Some(CorrectDrift {
            enabled: true,
            ..Default::default()
        });
        assert_eq!(options_hash(&options), options_hash(&reference_options()));
    }

    #[test]
    fn manifest_encoding_is_go_json_with_newline() {
        let resources = vec![BundleResource {
            name: "a.yaml".into(),
            content: "x: <&>\n".into(),
            encoding: String::new(),
        }];
        assert_eq!(
            String::from_utf8(manifest_bytes(&resources)).unwrap(),
            "{\"resources\":[{\"name\":\"a.yaml\",\"content\":\"x: \\u003c\\u0026\\u003e\\n\"}]}\n"
        );
        assert_eq!(String::from_utf8(manifest_bytes(&[])).unwrap(), "{}\n");
    }

    #[test]
    fn manifest_id_is_s_dash_sha_cut_to_63() {
        let resources = vec![BundleResource {
            name: "a".into(),
            content: "b".into(),
            encoding: String::new(),
        }];
        let id = manifest_id(&resources);
        assert_eq!(id.len(), 63);
        let full = hex::encode(Sha256::digest(
            b"{\"resources\":[{\"name\":\"a\",\"content\":\"b\"}]}\n",
        ));
        assert_eq!(id, format!("s-{}", &full[..61]));
    }

    /// Fleet's `integrationtests/cli/assets/bundledeployment/content.yaml`: a real Content object. Decoding its
    /// gzip payload, re-encoding the resources and hashing must reproduce its `sha256sum` and name.
    #[test]
    fn reproduces_fleet_content_fixture() {
        use std::io::Read;

        use base64::Engine;

        const CONTENT: &str = "H4sIAAAAAAAA/4SRMW/bMBCF9/6KA2eLtlygA7fCa7t6KTucpZNNhKII8iTEEPTfA5KRESdOsgjQ3Xv33gfOIlAcxtBQFOrfLBz2JJRoBteZc9VcMPD2kL7yir0Vm7RhciyUQG+OFKIZnIJpr12yKnjr1K6l2ATjOYt+A1NkyCvgCzJMFExnKILh+OrUjq+eFKD31jSYnNpNa85O1nKnHXp/i9ailvUvudNCO7FsHiMw9d4iU9yWcY/+G6BauyfjWgWHbPiLXrueGFtkVNoBFNxEVEXTe0slqloxbsIkSTUntCPV+5+p6GqfZ5DHNI8yDWBZvoCYivBD73KqpQ5Hy1X6uz/SWaIH73ch2+eC+fr7lwMocVmx1qVnzKR5dR/yWbkxWAVnO5zQylKksWNkCn/wRLZgp0v/lx8vAQAA//+su6S1jAIAAA==";
        let compressed = base64::engine::general_purpose::STANDARD
            .decode(CONTENT)
            .unwrap();
        let mut stored = Vec::new();
        flate2::read::GzDecoder::new(compressed.as_slice())
            .read_to_end(&mut stored)
            .unwrap();

        #[derive(serde::Deserialize)]
        struct Stored {
            resources: Vec<BundleResource>,
        }
        let parsed: Stored = serde_json::from_slice(&stored).unwrap();
        assert_eq!(
            manifest_bytes(&parsed.resources),
            stored,
            "re-encoding must be byte-identical"
        );
        assert_eq!(
            manifest_sha256(&parsed.resources),
            "ee0480cffe0c0da150814f6844d7c5bc49cc05c158c5ba1efe9a45142f36eebc"
        );
        assert_eq!(
            manifest_id(&parsed.resources),
            "s-ee0480cffe0c0da150814f6844d7c5bc49cc05c158c5ba1efe9a45142f36e"
        );
    }
}
