//! `fleet dev`: dev mode in one command. Starts the embedded hub, the controller, the local agent and
//! `--clusters` simulated downstream clusters registered through the token flow, creates the GitRepos of
//! each `--repo`, writes kubeconfigs into `--data-dir`, and shows a live view until Ctrl-C (or, with
//! `--exit-when-ready`, until every GitRepo is Ready on every cluster it targets). See `fleet_dev`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use fleet_dev::live::{self, Outcome};
use fleet_dev::{Dev, DevOptions, RepoSource, Tuning};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of simulated downstream clusters (`cluster-1` … ; labels `env` = dev, staging, prod, dev, …).
    #[arg(long, default_value_t = 3)]
    clusters: usize,
    /// A GitRepo source (repeatable): an example folder (gitrepo.yaml + repo/), a git work tree or bare
    /// repository (its current branch), or a URL. Local sources are watched: a change deploys at once.
    #[arg(long = "repo", value_name = "URL|PATH")]
    repos: Vec<String>,
    /// State directory (kubeconfigs, local git repositories, git cache, log). Emptied at start if an
    /// earlier `fleet dev` made it; any other non-empty directory is refused.
    #[arg(long, default_value = ".fleet-dev")]
    data_dir: PathBuf,
    /// Exit 0 once every GitRepo is Ready on every cluster it targets (non-zero after TIMEOUT, default
    /// 120s), instead of running until Ctrl-C.
    #[arg(long, value_name = "TIMEOUT", num_args = 0..=1, require_equals = true, default_missing_value = "120s")]
    exit_when_ready: Option<String>,
    /// Polling interval of GitRepos that set none, in seconds.
    #[arg(long, default_value_t = 15)]
    default_polling_seconds: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let exit_when_ready = args
        .exit_when_ready
        .as_deref()
        .map(parse_timeout)
        .transpose()?;
    let mut repos = Vec::new();
    for argument in &args.repos {
        repos.push(RepoSource::parse(argument)?.into());
    }
    init_logging(&args.data_dir);
    let options = DevOptions {
        clusters: args.clusters,
        repos,
        data_dir: args.data_dir.clone(),
        tuning: Tuning {
            default_polling_interval: Duration::from_secs(args.default_polling_seconds.max(1)),
            ..Tuning::default()
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_dev(options, exit_when_ready))
}

async fn run_dev(options: DevOptions, exit_when_ready: Option<Duration>) -> anyhow::Result<()> {
    let shutdown = shutdown_signal()?;
    let clusters = options.clusters;
    eprintln!("fleet dev: starting the hub, the controller and {clusters} cluster(s)…");
    let dev = Dev::start(options).await?;
    let hints = dev.kubectl_hints().join("\n  ");
    let intro = format!(
        "fleet dev: hub at {}, {} cluster(s) registered, state in {}\nLook at them with:\n  {hints}\nPush webhook: {}\n",
        dev.hub_url(),
        dev.clusters().len(),
        dev.data_dir().root().display(),
        dev.webhook_url(),
    );
    let terminal = std::io::stdout().is_terminal();
    let footer = format!("{intro}(Ctrl-C stops dev mode)\n");
    if !terminal {
        print!("{intro}");
    }
    let mut stdout = std::io::stdout();
    let outcome = live::run(
        &dev,
        &mut stdout,
        terminal,
        &footer,
        exit_when_ready,
        shutdown,
    )
    .await;
    eprintln!("fleet dev: stopping agents, controller and servers…");
    dev.shutdown().await;
    match outcome? {
        Outcome::Interrupted => Ok(()),
        Outcome::Ready => {
            println!("fleet dev: every GitRepo is Ready on every cluster it targets");
            Ok(())
        }
        Outcome::TimedOut(waiting) => bail!(
            "not ready after {}s:\n  {}",
            exit_when_ready.unwrap_or_default().as_secs(),
            waiting.join("\n  ")
        ),
    }
}

/// `120s`, `2m`, `1m30s` or plain seconds.
fn parse_timeout(text: &str) -> anyhow::Result<Duration> {
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    fleet_controller::gitrepo::poll::parse_go_duration(text)
        .with_context(|| format!("--exit-when-ready={text}: not a duration (e.g. 90s, 2m)"))
}

/// Logs go to `<data-dir>/fleet-dev.log` (RUST_LOG, default info), so they never mix with the view.
fn init_logging(data_dir: &std::path::Path) {
    let path = data_dir.join("fleet-dev.log");
    let writer = move || -> Box<dyn std::io::Write> {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Box::new(file),
            Err(_) => Box::new(std::io::sink()),
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_ansi(false)
        .with_writer(writer)
        .try_init();
}

/// Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is called, not when the returned future is
/// first polled, so a signal that arrives while dev mode is still starting or drawing its first view is not lost
/// (nor does it kill the process without a clean shutdown).
#[cfg(unix)]
pub(crate) fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("catching SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("catching SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Ctrl-C.
#[cfg(not(unix))]
pub(crate) fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_seconds_or_go_durations() {
        assert_eq!(parse_timeout("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_timeout("2m").unwrap(), Duration::from_secs(120));
        assert!(
            parse_timeout("soon")
                .unwrap_err()
                .to_string()
                .contains("--exit-when-ready=soon")
        );
    }
}
