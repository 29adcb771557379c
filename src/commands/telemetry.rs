//! The process's logs (stderr; RUST_LOG filters them, errors only by default) and, in a build
//! with the OTLP front, the export of the crossing's spans beside them.

/// What runs while the process does: the export to finish before it ends.
pub struct Telemetry {
    #[cfg(feature = "otlp")]
    export: Option<aura_otlp::OtlpExport>,
}

/// Starts the logs, and the export when `otlp` (or the standard OTEL_EXPORTER_OTLP_* variables)
/// asks for one; `front` names the process's role (its command) in the export's resource.
pub fn start(json: bool, otlp: Option<&str>, front: &str) -> anyhow::Result<Telemetry> {
    #[cfg(feature = "otlp")]
    {
        let export = aura_otlp::OtlpExport::start(otlp, front)?;
        init_logs(json, export.as_ref().map(|export| export.layer()));
        Ok(Telemetry { export })
    }
    #[cfg(not(feature = "otlp"))]
    {
        let _ = (otlp, front);
        init_logs(json, None::<tracing_subscriber::layer::Identity>);
        Ok(Telemetry {})
    }
}

impl Telemetry {
    /// Sends the spans still queued.
    pub fn finish(self) -> anyhow::Result<()> {
        #[cfg(feature = "otlp")]
        if let Some(export) = self.export {
            export.shutdown()?;
        }
        Ok(())
    }
}

/// Logs to stderr (RUST_LOG filters them; errors only by default), and `export`'s layer, with
/// its own filter, beside them.
fn init_logs<L>(json: bool, export: Option<L>)
where
    L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync,
{
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match json {
        true => logs.json().boxed(),
        false => logs.boxed(),
    };
    tracing_subscriber::registry()
        .with(export)
        .with(logs.with_filter(filter))
        .init();
}
