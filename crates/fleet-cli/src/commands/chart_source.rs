//! The command-line side of remote charts for `fleet apply`, `fleet test`, `fleet target` and
//! `fleet helm template`: Fleet's `fleet apply` Helm credential flags, `--offline`, and the one chart source
//! (download cache) a command uses.

use std::path::PathBuf;

use anyhow::Context;
use fleet_chart_source::{Auth, ChartSource, Credentials};

/// Where charts that are not in a bundle come from, and with which credentials (Fleet's `fleet apply` flags).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ChartArgs {
    /// Basic auth username for Helm repositories and OCI registries.
    #[arg(long, env = "HELM_USERNAME")]
    pub username: Option<String>,
    /// File holding the basic auth password.
    #[arg(long = "password-file")]
    pub password_file: Option<PathBuf>,
    /// PEM CA certificates trusted for Helm repositories and OCI registries.
    #[arg(long = "cacerts-file")]
    pub cacerts_file: Option<PathBuf>,
    /// Credentials are sent only to chart URLs this regex matches at their start (none when unset).
    #[arg(long = "helm-repo-url-regex", default_value = "")]
    pub helm_repo_url_regex: String,
    /// YAML file of bundle path (or glob) → credentials, as a GitRepo's helmSecretNameForPaths secret holds.
    #[arg(long = "helm-credentials-by-path-file")]
    pub helm_credentials_by_path_file: Option<PathBuf>,
    /// Plain HTTP to OCI registries.
    #[arg(long = "helm-basic-http")]
    pub helm_basic_http: bool,
    /// Skip TLS verification of Helm repositories and OCI registries.
    #[arg(long = "helm-insecure-skip-tls")]
    pub helm_insecure_skip_tls: bool,
    /// Never download: a chart that is not in the bundle is an error.
    #[arg(long)]
    pub offline: bool,
}

impl ChartArgs {
    /// The credentials these flags describe.
    pub fn credentials(&self) -> anyhow::Result<Credentials> {
        let read = |path: &PathBuf| {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        };
        let mut default = Auth {
            insecure_skip_verify: self.helm_insecure_skip_tls,
            basic_http: self.helm_basic_http,
            ..Auth::default()
        };
        if let (Some(username), Some(password_file)) = (&self.username, &self.password_file) {
            default.username = username.clone();
            default.password = String::from_utf8(read(password_file)?)
                .with_context(|| format!("{}: not UTF-8", password_file.display()))?
                .trim_end_matches(['\r', '\n'])
                .to_string();
        }
        if let Some(file) = &self.cacerts_file {
            default.ca_bundle = read(file)?;
        }
        let by_path = match &self.helm_credentials_by_path_file {
            Some(file) => {
                let text = String::from_utf8(read(file)?)
                    .with_context(|| format!("{}: not UTF-8", file.display()))?;
                Credentials::parse_by_path(&text)
                    .with_context(|| format!("reading {}", file.display()))?
            }
            None => Default::default(),
        };
        Ok(Credentials {
            default,
            by_path,
            url_regex: self.helm_repo_url_regex.clone(),
        })
    }

    /// The chart source of one command, `None` with `--offline`.
    pub fn source(&self) -> Option<ChartSource> {
        (!self.offline).then(ChartSource::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_credentials() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pw"), "s3cret\n").unwrap();
        std::fs::write(
            dir.path().join("paths.yaml"),
            "\"a/*\": {username: x, password: pw}\n",
        )
        .unwrap();
        let args = ChartArgs {
            username: Some("u".into()),
            password_file: Some(dir.path().join("pw")),
            helm_credentials_by_path_file: Some(dir.path().join("paths.yaml")),
            helm_repo_url_regex: "https://r".into(),
            ..Default::default()
        };
        let creds = args.credentials().unwrap();
        assert_eq!(creds.default.password, "s3cret");
        assert_eq!(creds.for_path("a/b").0.password, "pw");
        assert!(
            ChartArgs {
                offline: true,
                ..Default::default()
            }
            .source()
            .is_none()
        );
    }
}
