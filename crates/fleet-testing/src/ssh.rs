//! A stand-in for the OpenSSH client (no sshd is installed on the build machines), for tests of the ssh
//! transport: it checks the key file and the host key options the way OpenSSH would, prints OpenSSH's
//! messages on failure (`Host key verification failed.`, `Permission denied (publickey).`, `Connection
//! refused` for the host `unreachable.test`), and otherwise runs the remote git command locally.
//! The key it accepts is [`FAKE_SSH_KEY`].

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The only private key the stand-in accepts.
pub const FAKE_SSH_KEY: &str =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-FOR-TESTS\n-----END OPENSSH PRIVATE KEY-----\n";

/// Writes the stand-in `ssh` client into `dir` and returns its path; it records its arguments in `args.log`
/// beside itself.
pub fn fake_ssh(dir: &Path) -> PathBuf {
    let path = dir.join("fake-ssh");
    let log = dir.join("args.log");
    let script = format!(
        r#"#!/bin/sh
printf '%s\n' "$@" > '{log}'
key=""; known=""; strict=""
while [ $# -gt 0 ]; do
  case "$1" in
    -i) key="$2"; shift 2 ;;
    -F) shift 2 ;;
    -o) case "$2" in
          UserKnownHostsFile=*) known="${{2#UserKnownHostsFile=}}" ;;
          StrictHostKeyChecking=*) strict="${{2#StrictHostKeyChecking=}}" ;;
        esac
        shift 2 ;;
    -p*) shift ;;
    *) break ;;
  esac
done
host="${{1#*@}}"; shift
if [ "$host" = "unreachable.test" ]; then
  echo "ssh: connect to host $host port 22: Connection refused" >&2; exit 255
fi
if [ "$strict" = "yes" ] && ! grep -q "^$host " "$known" 2>/dev/null; then
  echo "Host key verification failed." >&2; exit 255
fi
if [ -z "$key" ] || [ "$(stat -c %a "$key")" != "600" ] || ! grep -q FAKE-KEY-FOR-TESTS "$key"; then
  echo "git@$host: Permission denied (publickey)." >&2; exit 255
fi
exec sh -c "$*"
"#,
        log = log.display()
    );
    std::fs::write(&path, script).expect("write the stand-in ssh client");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("make the stand-in ssh client executable");
    path
}
