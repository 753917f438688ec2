//! Checkpoints: named f32 tensors in one safetensors file, with text metadata (the run's
//! configuration and round state as JSON), written atomically: to a temporary file in the same
//! folder, flushed to disk, then renamed over the old one, so a killed run leaves either the old
//! checkpoint or the new one, never half of one.

use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use tch::{Kind, Tensor};

use crate::error::TrainError;

/// Named tensors and text metadata, as a checkpoint holds them.
pub type Contents = (Vec<(String, Tensor)>, HashMap<String, String>);

/// Writes `tensors` and `metadata` to `path` atomically.
///
/// # Errors
/// I/O errors, with the path.
pub fn save(
    path: &Path,
    tensors: &[(String, Tensor)],
    metadata: HashMap<String, String>,
) -> Result<(), TrainError> {
    let mut raw: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let t = t.detach().to_kind(Kind::Float).contiguous();
        let shape: Vec<usize> = t.size().iter().map(|&s| s as usize).collect();
        let values = Vec::<f32>::try_from(t.flatten(0, -1)).map_err(TrainError::Torch)?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        raw.push((name.clone(), shape, bytes));
    }
    let views = raw
        .iter()
        .map(|(n, s, b)| {
            TensorView::new(Dtype::F32, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| TrainError::Input(format!("tensor {n}: {e:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = safetensors::tensor::serialize(views, &Some(metadata))
        .map_err(|e| TrainError::Input(format!("{}: cannot serialise: {e:?}", path.display())))?;
    Ok(floe_rounds::folder::write_atomic(path, &bytes)?)
}

/// Reads a checkpoint: its tensors (f32) and metadata.
///
/// # Errors
/// I/O errors; [`TrainError::Input`] for a file that is not a safetensors file of f32 tensors.
pub fn load(path: &Path) -> Result<Contents, TrainError> {
    let bytes = std::fs::read(path).map_err(|e| TrainError::io(path, e))?;
    let bad = |m: String| TrainError::Input(format!("{}: not a floe checkpoint: {m}", path.display()));
    let (_, meta) = SafeTensors::read_metadata(&bytes).map_err(|e| bad(format!("{e:?}")))?;
    let st = SafeTensors::deserialize(&bytes).map_err(|e| bad(format!("{e:?}")))?;
    let mut out = Vec::new();
    for (name, view) in st.tensors() {
        if view.dtype() != Dtype::F32 {
            return Err(bad(format!("tensor {name} is {:?}, not F32", view.dtype())));
        }
        let values: Vec<f32> =
            view.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let shape: Vec<i64> = view.shape().iter().map(|&s| s as i64).collect();
        out.push((name, Tensor::from_slice(&values).reshape(shape)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((out, meta.metadata().clone().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_atomic_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.safetensors");
        let t = Tensor::from_slice(&[1.0f32, -2.5, 3.0, 4.0, 5.0, 6.0]).reshape([2, 3]);
        let meta = HashMap::from([("config".to_string(), "{\"a\":1}".to_string())]);
        save(&path, &[("w".into(), t.shallow_clone())], meta.clone()).unwrap();
        save(&path, &[("w".into(), &t * 2.0)], meta.clone()).unwrap();
        let (ts, m) = load(&path).unwrap();
        assert_eq!(m, meta);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].1.size(), vec![2, 3]);
        assert!((&ts[0].1 - &t * 2.0).abs().max().double_value(&[]) < 1e-9);
        // Only the checkpoint is left in the folder: no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::write(&path, b"garbage").unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("not a floe checkpoint"));
    }
}
