//! Real servers for the chart source tests: Debian's `docker-registry` (a distribution registry) on a loopback
//! port, with or without htpasswd basic auth, filled with the real `helm push`; and an HTTPS Helm repository with
//! basic auth and a private CA (`scripts/chart-repo-server.py`), filled with `helm package` and `helm repo index`.
//! A missing server binary fails the test (CI installs `docker-registry`).

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use fleet_chart_source::Auth;

pub const USER: &str = "fleet";
pub const PASSWORD: &str = "pw-Sekr1t-9f3e";

/// The repository root (for `scripts/`, `.tools/bin`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `helm` with its configuration and caches inside `home`.
pub fn helm(home: &Path) -> Command {
    let tools = repo_root().join(".tools/bin");
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("helm");
    command
        .env("PATH", path)
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .env("HELM_REGISTRY_CONFIG", home.join("registry.json"));
    command
}

pub fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes a chart `name` at `version` under `dir` and packages it into `out`; returns the archive path.
pub fn package_chart(home: &Path, dir: &Path, name: &str, version: &str, out: &Path) -> PathBuf {
    let chart = dir.join(format!("{name}-{version}"));
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"{version}\"\n"),
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "replicas: 1\ncolor: blue\n").unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n  labels:\n    chart: {{ .Chart.Name }}-{{ .Chart.Version | replace \"+\" \"_\" }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  color: {{ .Values.color }}\n  namespace: {{ .Release.Namespace }}\n",
    )
    .unwrap();
    std::fs::create_dir_all(out).unwrap();
    run(helm(home).arg("package").arg(&chart).arg("-d").arg(out));
    let archive = out.join(format!("{name}-{version}.tgz"));
    assert!(archive.exists(), "{archive:?}");
    archive
}

/// [`package_chart`] of chart `name` at each of `versions` (written under `home/src`) into `out`; returns the
/// archives in the order of `versions`.
pub fn package_versions(home: &Path, name: &str, versions: &[&str], out: &Path) -> Vec<PathBuf> {
    versions
        .iter()
        .map(|version| package_chart(home, &home.join("src"), name, version, out))
        .collect()
}

/// `helm repo index` of a directory of chart archives, as a Helm repository serves it.
pub fn index(home: &Path, served: &Path) {
    run(helm(home).arg("repo").arg("index").arg(served));
}

/// [`package_versions`] into `served`, then [`index`]: `served` is a Helm repository holding those versions.
pub fn serve_versions(home: &Path, name: &str, versions: &[&str], served: &Path) {
    package_versions(home, name, versions, served);
    index(home, served);
}

/// A running `docker-registry`.
pub struct Registry {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
    pub auth: bool,
}

impl Registry {
    pub fn start(auth: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        if auth {
            let hash = bcrypt::hash(PASSWORD, 4).unwrap();
            std::fs::write(dir.path().join("htpasswd"), format!("{USER}:{hash}\n")).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: charts\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("docker-registry could not be started ({e}): install Debian's docker-registry package")
            });
        let registry = Self {
            port,
            child,
            _dir: dir,
            auth,
        };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return registry;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("docker-registry did not listen on 127.0.0.1:{port}");
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `helm push` of `archive` into `oci://<host>/<path>` (logging in first when the registry has auth).
    pub fn push(&self, home: &Path, archive: &Path, path: &str) {
        if self.auth {
            run(helm(home)
                .args(["registry", "login", &self.host(), "--plain-http"])
                .args(["--username", USER, "--password", PASSWORD]));
        }
        run(helm(home)
            .arg("push")
            .arg(archive)
            .arg(format!("oci://{}/{path}", self.host()))
            .arg("--plain-http"));
    }

    /// [`package_versions`] of chart `name` (sources under `home/oci-src`, archives in `home/oci-out`), each
    /// archive [`push`](Self::push)ed into `oci://<host>/<path>`; returns the archives in the order of `versions`.
    pub fn push_versions(
        &self,
        home: &Path,
        name: &str,
        versions: &[&str],
        path: &str,
    ) -> Vec<PathBuf> {
        let archives: Vec<PathBuf> = versions
            .iter()
            .map(|version| {
                package_chart(
                    home,
                    &home.join("oci-src"),
                    name,
                    version,
                    &home.join("oci-out"),
                )
            })
            .collect();
        for archive in &archives {
            self.push(home, archive, path);
        }
        archives
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA and a certificate for 127.0.0.1 signed by it (PEM).
pub struct Pki {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

pub fn pki() -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "test charts CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params
        .signed_by(&key, &Issuer::from_params(&ca_params, &ca_key))
        .unwrap();
    Pki {
        ca: ca.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// An HTTPS chart repository with basic auth (`USER`/`PASSWORD`) serving `dir`.
pub struct ChartRepo {
    pub port: u16,
    child: Child,
    pub pki: Pki,
    _certs: tempfile::TempDir,
}

impl ChartRepo {
    pub fn start(dir: &Path) -> Self {
        Self::start_as(dir, USER, PASSWORD)
    }

    /// The same without authentication: a public repository (behind the same kind of private CA).
    pub fn start_public(dir: &Path) -> Self {
        Self::start_as(dir, "-", "-")
    }

    fn start_as(dir: &Path, user: &str, password: &str) -> Self {
        let pki = pki();
        let certs = tempfile::tempdir().unwrap();
        std::fs::write(certs.path().join("cert.pem"), &pki.cert).unwrap();
        std::fs::write(certs.path().join("key.pem"), &pki.key).unwrap();
        let (child, port) = spawn_announcing_port(
            Command::new("python3")
                .arg(repo_root().join("scripts/chart-repo-server.py"))
                .arg(dir)
                .arg(certs.path().join("cert.pem"))
                .arg(certs.path().join("key.pem"))
                .args([user, password]),
            "the chart repository server",
        );
        Self {
            port,
            child,
            pki,
            _certs: certs,
        }
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// The repository's credentials (`USER`/`PASSWORD`) with its private CA trusted.
    pub fn auth(&self) -> Auth {
        Auth {
            username: USER.into(),
            password: PASSWORD.into(),
            ca_bundle: self.pki.ca.clone().into_bytes(),
            ..Default::default()
        }
    }
}

impl Drop for ChartRepo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `scripts/oci-tag-pager.py` in front of a [`Registry`]: the same registry, with its tag lists paged as the
/// distribution API specifies (Debian's registry lists every tag at once): `n` per page when asked, else `cap`
/// per page when given, and a `Link: <…>; rel="next"` header while tags remain.
pub struct TagPager {
    pub port: u16,
    child: Child,
}

impl TagPager {
    pub fn start(registry: &Registry, cap: Option<usize>) -> Self {
        let mut command = Command::new("python3");
        command
            .arg(repo_root().join("scripts/oci-tag-pager.py"))
            .arg(format!("http://{}", registry.host()));
        if let Some(cap) = cap {
            command.arg(cap.to_string());
        }
        let (child, port) = spawn_announcing_port(&mut command, "the tag pager");
        Self { port, child }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for TagPager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a helper server script that prints `port N` on its first line once it listens; returns the process
/// and the port.
fn spawn_announcing_port(command: &mut Command, what: &str) -> (Child, u16) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("python3 runs {what}: {err}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{what} said {line:?}"));
    (child, port)
}
