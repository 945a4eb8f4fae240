//! Remote URL handling: [`redact_url`] removes credentials for messages, and [`normalize_url`] reduces the https,
//! ssh, scp-style, `.git`-suffixed and differently cased spellings of one repository to one string, the key
//! the cache and the webhook matcher use.

/// `url` without any user name or password (`https://user:token@host/x` → `https://host/x`; a token may
/// stand in the user name). ssh URLs keep a user without a password (`ssh://git@host/x`, `git@host:path`).
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) if !is_plain_ssh_user(&url[..scheme_end], &rest[..at]) => {
            format!("{}{}", &url[..scheme_end + 3], &rest[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// An ssh URL's user without a password (`ssh://git@host/x`) names an account, not a secret: it is kept.
fn is_plain_ssh_user(scheme: &str, userinfo: &str) -> bool {
    scheme.to_ascii_lowercase().contains("ssh") && !userinfo.contains(':')
}

/// Replaces every `scheme://user:password@` in free text by `scheme://`, for error messages that quote URLs.
pub(crate) fn redact_urls_in_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c.is_whitespace() || c == '"' || c == '\''
            })
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(at) => rest = &tail[at + 1..],
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// One spelling for every form of a repository's URL: lower case `host/path`, without scheme, user, port,
/// trailing `/` or `.git`, with scp-style `git@host:path` read as `host/path`. Azure DevOps' ssh form
/// (`git@ssh.dev.azure.com:v3/org/project/repo`) and https form (`https://dev.azure.com/org/project/_git/repo`)
/// meet as `dev.azure.com/org/project/repo`. Local paths and `file://` URLs keep their case and become
/// `file://<path>`.
pub fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let (scheme, rest) = match url.find("://") {
        Some(pos) => (url[..pos].to_ascii_lowercase(), &url[pos + 3..]),
        None if is_scp_like(url) => ("ssh".to_string(), url),
        None => ("file".to_string(), url),
    };
    if scheme == "file" {
        let path = rest.trim_end_matches('/');
        return format!("file://{}", if path.is_empty() { "/" } else { path });
    }
    let (authority, path) = if scheme == "ssh" && !url.contains("://") {
        // scp-style: the first ':' separates host from path.
        rest.split_once(':').unwrap_or((rest, ""))
    } else {
        rest.split_once('/').unwrap_or((rest, ""))
    };
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let mut host = strip_port(host_port).to_ascii_lowercase();
    if scheme == "ssh"
        && let Some(stripped) = host.strip_prefix("ssh.")
    {
        host = stripped.to_string();
    }
    let mut path = path.trim_matches('/').to_ascii_lowercase();
    if let Some(stripped) = path.strip_suffix(".git") {
        path = stripped.trim_end_matches('/').to_string();
    }
    if let Some(stripped) = strip_api_version(&path) {
        path = stripped.to_string();
    }
    path = path.replace("/_git/", "/");
    format!("{host}/{path}")
}

/// `user@host:path` without a scheme, where the part before ':' has no '/' (so `./a:b` is a path).
fn is_scp_like(url: &str) -> bool {
    match url.find(':') {
        Some(colon) => !url[..colon].contains('/') && colon > 0 && !url.starts_with('/'),
        None => false,
    }
}

fn strip_port(host_port: &str) -> &str {
    if host_port.starts_with('[') {
        // An IPv6 literal: keep through the closing bracket.
        return host_port
            .find(']')
            .map_or(host_port, |end| &host_port[..=end]);
    }
    match host_port.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => host_port,
    }
}

/// `v3/org/...` → `org/...` (Azure DevOps' ssh paths carry an API version, as Fleet's matcher allows).
fn strip_api_version(path: &str) -> Option<&str> {
    let (first, rest) = path.split_once('/')?;
    let digits = first.strip_prefix('v')?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_removes_userinfo() {
        assert_eq!(
            redact_url("https://user:hunter2@example.com/org/repo.git"),
            "https://example.com/org/repo.git"
        );
        assert_eq!(
            redact_url("https://token@example.com/x"),
            "https://example.com/x"
        );
        assert_eq!(
            redact_url("git@github.com:org/repo"),
            "git@github.com:org/repo"
        );
        assert_eq!(redact_url("/srv/git/repo"), "/srv/git/repo");
        assert_eq!(
            redact_urls_in_text("failed for https://u:hunter2@h.example/r and ssh://git:p@h:22/x"),
            "failed for https://h.example/r and ssh://h:22/x"
        );
    }

    #[test]
    fn forms_of_one_repository_normalize_equal() {
        let forms = [
            "https://github.com/Rancher/Fleet-Examples",
            "https://github.com/rancher/fleet-examples.git",
            "https://github.com/rancher/fleet-examples/",
            "http://github.com:80/rancher/fleet-examples",
            "https://user:token@github.com/rancher/fleet-examples.git",
            "ssh://git@github.com/rancher/fleet-examples.git",
            "ssh://git@github.com:22/rancher/fleet-examples",
            "git@github.com:rancher/fleet-examples.git",
            "git@github.com:/rancher/fleet-examples",
        ];
        for form in forms {
            assert_eq!(
                normalize_url(form),
                "github.com/rancher/fleet-examples",
                "{form}"
            );
        }
        assert_ne!(
            normalize_url("https://github.com/rancher/fleet"),
            normalize_url("https://github.com/rancher/fleet-examples")
        );
        assert_ne!(
            normalize_url("https://gitlab.com/rancher/fleet"),
            normalize_url("https://github.com/rancher/fleet")
        );
    }

    #[test]
    fn azure_devops_forms_normalize_equal() {
        assert_eq!(
            normalize_url("https://org@dev.azure.com/org/project/_git/repo"),
            "dev.azure.com/org/project/repo"
        );
        assert_eq!(
            normalize_url("git@ssh.dev.azure.com:v3/org/project/repo"),
            "dev.azure.com/org/project/repo"
        );
    }

    #[test]
    fn local_paths_keep_case() {
        assert_eq!(normalize_url("/srv/Git/repo/"), "file:///srv/Git/repo");
        assert_eq!(
            normalize_url("file:///srv/Git/repo"),
            "file:///srv/Git/repo"
        );
        assert_eq!(normalize_url("./relative:odd"), "file://./relative:odd");
    }
}
