use floe_core::text::render_prompt;

use crate::error::CliError;
use crate::input::InstanceSource;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: InstanceSource,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let instances = a.source.load()?;
    let mut out = Vec::with_capacity(instances.len());
    for (n, inst) in instances.iter().enumerate() {
        out.push(
            render_prompt(inst)
                .map_err(|e| CliError::Input(format!("{}: instance {}: {e}", a.source.describe(), n + 1)))?,
        );
    }
    crate::emit(None, &out.join("\n"))
}
