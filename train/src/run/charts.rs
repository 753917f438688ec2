//! The run's charts: the warm start's loss, GRPO's reward and sampled valid rate with the
//! validation points, and the validation valid rate per map size after each stage.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::TrainError;
use crate::plot::{moving_average, Chart, Series};
use floe_rounds::{RunState, Stage};

/// Writes the run's plots into `out`.
///
/// # Errors
/// I/O errors.
pub fn plots(out: &Path, state: &RunState) -> Result<(), TrainError> {
    if !state.sft_curve.is_empty() {
        let chart = Chart {
            title: "warm start: cross-entropy per answer token".into(),
            x_label: "step".into(),
            y_range: None,
            series: vec![Series {
                name: "loss".into(),
                points: state.sft_curve.iter().map(|&(s, l)| (s as f64, l)).collect(),
                dots: false,
            }],
            x_names: vec![],
        };
        chart.draw(640, 360).save_png(&out.join("sft_loss.png"))?;
    }
    if !state.grpo_curve.is_empty() {
        let rounds: Vec<(f64, f64)> = state
            .evals
            .iter()
            .filter(|e| matches!(e.stage, Stage::WarmStart | Stage::Round(_)))
            .map(|e| (e.grpo_step as f64, e.valid))
            .collect();
        let chart = Chart {
            title: "GRPO: sampled reward and valid rate (moving mean of 16 steps); validation".into(),
            x_label: "GRPO step".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![
                Series {
                    name: "reward".into(),
                    points: moving_average(
                        &state.grpo_curve.iter().map(|&(s, r, _)| (s as f64, r)).collect::<Vec<_>>(),
                        16,
                    ),
                    dots: false,
                },
                Series {
                    name: "valid (sampled)".into(),
                    points: moving_average(
                        &state.grpo_curve.iter().map(|&(s, _, v)| (s as f64, v)).collect::<Vec<_>>(),
                        16,
                    ),
                    dots: false,
                },
                Series { name: "valid (validation)".into(), points: rounds, dots: true },
            ],
            x_names: vec![],
        };
        chart.draw(720, 400).save_png(&out.join("grpo.png"))?;
    }
    if !state.evals.is_empty() {
        let mut by_size: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
        for (i, e) in state.evals.iter().enumerate() {
            for r in e.report.size_results() {
                by_size.entry(r.size).or_default().push((i as f64, r.valid_rate));
            }
        }
        let names = state.evals.iter().map(|e| e.stage.short()).collect();
        let chart = Chart {
            title: "validation valid rate per map size".into(),
            x_label: "stage".into(),
            y_range: Some((0.0, 1.0)),
            series: by_size
                .into_iter()
                .map(|(s, points)| Series { name: format!("{s}x{s}"), points, dots: true })
                .collect(),
            x_names: names,
        };
        chart.draw(640, 360).save_png(&out.join("per_size.png"))?;
    }
    Ok(())
}
