//! The API server as its own small binary (same code as `fleet apiserver`), so that this crate's tests can
//! run it as a separate process and kill it (`kill -9` durability test).

use std::net::SocketAddr;
use std::path::PathBuf;

use fleet_apiserver::standalone::{self, Options};

fn main() -> std::process::ExitCode {
    let mut options = Options {
        listen: SocketAddr::from(([127, 0, 0, 1], 6443)),
        data_dir: None,
        kubeconfig_out: None,
        plain_http: false,
        watch_history: 10_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--listen" => match value().parse() {
                Ok(addr) => options.listen = addr,
                Err(err) => return fail(&format!("--listen: {err}")),
            },
            "--data-dir" => options.data_dir = Some(PathBuf::from(value())),
            "--kubeconfig-out" => options.kubeconfig_out = Some(PathBuf::from(value())),
            "--plain-http" => options.plain_http = true,
            other => return fail(&format!("unknown argument {other:?}")),
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return fail(&err.to_string()),
    };
    match runtime.block_on(standalone::run(options)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => fail(&err.to_string()),
    }
}

fn fail(message: &str) -> std::process::ExitCode {
    eprintln!("error: {message}");
    std::process::ExitCode::FAILURE
}
