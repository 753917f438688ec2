//! C plugins (`floe_plugin.h`): the entry point is called once at load time to read and check
//! the plugin's description (then the instance is destroyed), and once per instance the host
//! makes. Instances keep the library loaded; every string and array crossing is checked. The
//! struct grows by appended fields: the host copies the bytes its `struct_size` and this host
//! both know, and gives a field the plugin does not have its documented default.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Arc;

use floe_plugin_api::design::{DesignLimits, DesignLimitsRecord};
use floe_plugin_api::levels::check_update;
use floe_plugin_api::traits::{check_lengths, check_replay, check_rewards};
use floe_plugin_api::{
    Capabilities, Curriculum, EngineerReply, EnvEngineer, EpisodeRecord, History, LevelPlan, LevelRecord,
    LevelSampler, PluginError, PluginInfo, PluginKind, ReplayRecord, ReplayRequest, RewardFn, RoundConfig,
    StepOutcome, VerdictRecord, C_ABI_VERSION,
};

use crate::LoadFailure;

const ENTRY: &[u8] = b"floe_plugin_entry_v1\0";

type EntryFn = unsafe extern "C" fn(*const c_char, *mut *const RawPluginV1, *mut *const c_char) -> i32;

/// `floe_plugin_v1`, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawPluginV1 {
    abi_version: u32,
    struct_size: u32,
    kind: u32,
    reserved: u32,
    name: *const c_char,
    version: *const c_char,
    user_data: *mut c_void,
    last_error: Option<unsafe extern "C" fn(*mut c_void) -> *const c_char>,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    verdict_rewards: Option<unsafe extern "C" fn(*mut c_void, *const VerdictRecord, usize, *mut f32) -> i32>,
    step_rewards: Option<unsafe extern "C" fn(*mut c_void, *const StepOutcome, usize, *mut f32) -> i32>,
    next_config: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut *const c_char) -> i32>,
    sample_replay: Option<
        unsafe extern "C" fn(
            *mut c_void,
            *const ReplayRecord,
            usize,
            *const ReplayRequest,
            *mut u32,
            *mut usize,
        ) -> i32,
    >,
    design: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut *const c_char) -> i32>,
    // Appended after the first release: read only when `struct_size` covers them.
    capabilities: u32,
    design_with_limits: Option<
        for<'a> unsafe extern "C" fn(
            *mut c_void,
            *const c_char,
            usize,
            *const DesignLimitsRecord<'a>,
            *mut *const c_char,
        ) -> i32,
    >,
    update_levels: Option<UpdateLevelsFn>,
}

/// `floe_plugin_v1.update_levels`.
type UpdateLevelsFn = unsafe extern "C" fn(
    *mut c_void,
    *const LevelRecord,
    usize,
    *const EpisodeRecord,
    usize,
    *const f32,
    *mut f64,
    *mut u32,
    *mut u32,
    *mut usize,
    *mut *const c_char,
) -> i32;

/// The first release's struct ended with `design`: the least `struct_size` a plugin may give.
const FIRST_RELEASE_SIZE: usize = std::mem::offset_of!(RawPluginV1, capabilities);

/// The size of a function pointer field.
const PTR: usize = std::mem::size_of::<usize>();

/// Whether a plugin's struct of `struct_size` bytes holds the field at `offset` of `size` bytes.
fn holds(struct_size: usize, offset: usize, size: usize) -> bool {
    struct_size >= offset + size
}

/// Whether the library exports the C entry point.
pub(crate) fn has_entry(lib: &libloading::Library) -> bool {
    crate::dl::has_symbol(lib, ENTRY)
}

/// Copies a C string the plugin owns; `None` for NULL or non-UTF-8 text.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string valid for the duration of the call.
unsafe fn copy_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL, and NUL-terminated and valid by the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().ok().map(str::to_string)
}

/// A loaded C library.
pub(crate) struct CLibrary {
    lib: Arc<libloading::Library>,
    entry: EntryFn,
    info: PluginInfo,
}

impl std::fmt::Debug for CLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CLibrary").field("info", &self.info).finish_non_exhaustive()
    }
}

impl CLibrary {
    /// Resolves the entry point and makes (then destroys) one instance with default parameters
    /// to read and check the description.
    pub(crate) fn load(lib: libloading::Library) -> Result<Self, LoadFailure> {
        // SAFETY: `floe_plugin.h` declares the symbol with exactly this signature; the fn pointer
        // is only called while `lib` (kept in the `Arc`) is loaded.
        let entry: EntryFn =
            unsafe { lib.get::<EntryFn>(ENTRY) }.map(|s| *s).map_err(|e| LoadFailure::Open(e.to_string()))?;
        let lib = Arc::new(lib);
        let first = CInstance::create(&lib, entry, None)?;
        let info = first.info.clone();
        drop(first);
        Ok(CLibrary { lib, entry, info })
    }

    pub(crate) fn info(&self) -> &PluginInfo {
        &self.info
    }

    /// A new instance of the library's plugin, which must be of `kind` and named `name`.
    pub(crate) fn instance(
        &self,
        kind: PluginKind,
        name: &str,
        params: &str,
    ) -> Result<CInstance, PluginError> {
        if self.info.kind != kind || self.info.name != name {
            return Err(PluginError::UnknownPlugin(format!("{kind} {name}")));
        }
        let params = CString::new(params)
            .map_err(|_| PluginError::BadInput("the parameters contain a NUL byte".into()))?;
        CInstance::create(&self.lib, self.entry, Some(&params)).map_err(|e| match e {
            LoadFailure::Entry { code, message } => PluginError::from_code(code, message),
            other => PluginError::BadOutput(other.to_string()),
        })
    }
}

/// One C plugin instance; destroyed on drop.
pub(crate) struct CInstance {
    raw: RawPluginV1,
    /// The plugin's `struct_size`: which appended fields it has.
    struct_size: usize,
    info: PluginInfo,
    // Keeps the library loaded while the instance lives (dropped after `Drop::drop` ran).
    _lib: Arc<libloading::Library>,
}

// SAFETY: `floe_plugin.h` requires an instance to accept calls from any thread, one at a time;
// every call goes through `&mut self`, so calls are never concurrent. The raw pointers are only
// handed back to the plugin.
unsafe impl Send for CInstance {}

impl std::fmt::Debug for CInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CInstance").field("info", &self.info).finish_non_exhaustive()
    }
}

impl CInstance {
    fn create(
        lib: &Arc<libloading::Library>,
        entry: EntryFn,
        params: Option<&CString>,
    ) -> Result<Self, LoadFailure> {
        let mut out: *const RawPluginV1 = std::ptr::null();
        let mut err: *const c_char = std::ptr::null();
        let params_ptr = params.map_or(std::ptr::null(), |p| p.as_ptr());
        // SAFETY: the signature is the header's; `params_ptr` is NULL or a NUL-terminated string
        // alive for the call; `out` and `err` are valid places for the plugin to write to.
        let status = unsafe { entry(params_ptr, &mut out, &mut err) };
        if status != 0 {
            // SAFETY: on failure `err` is NULL or a string valid until the next entry call.
            let message = unsafe { copy_str(err) }.unwrap_or_else(|| "no message".into());
            return Err(LoadFailure::Entry { code: status, message });
        }
        if out.is_null() {
            return Err(LoadFailure::Malformed("the entry point succeeded but returned no plugin".into()));
        }
        // SAFETY: every version of the struct starts with `uint32_t abi_version`; nothing else is
        // read until it matches.
        let abi_version = unsafe { out.cast::<u32>().read() };
        if abi_version != C_ABI_VERSION {
            // The instance is left alone: its layout, destroy included, is unknown.
            return Err(LoadFailure::AbiVersion { found: abi_version, expected: C_ABI_VERSION });
        }
        // SAFETY: version 1 starts with two `uint32_t`s, abi_version and struct_size.
        let struct_size = unsafe { out.cast::<u32>().add(1).read() };
        if (struct_size as usize) < FIRST_RELEASE_SIZE {
            return Err(LoadFailure::StructSize { found: struct_size, expected: FIRST_RELEASE_SIZE as u32 });
        }
        // A plugin built against an older header has a shorter struct, one built against a newer
        // header a longer one: exactly the bytes both know are copied, the rest stays zero.
        let known = (struct_size as usize).min(std::mem::size_of::<RawPluginV1>());
        let mut raw = std::mem::MaybeUninit::<RawPluginV1>::zeroed();
        // SAFETY: the plugin's struct is valid for `struct_size >= known` bytes until destroy;
        // `raw` has room for `known <= size_of::<RawPluginV1>()` bytes; they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(out.cast::<u8>(), raw.as_mut_ptr().cast::<u8>(), known) };
        // SAFETY: all zeros is a valid `RawPluginV1` (integers, NULL pointers, `None`s), and the
        // bytes copied over them are the plugin's fields of the same types.
        let mut raw = unsafe { raw.assume_init() };
        // A function pointer only partly inside `struct_size` is not the plugin's: its default.
        if !holds(struct_size as usize, std::mem::offset_of!(RawPluginV1, design_with_limits), PTR) {
            raw.design_with_limits = None;
        }
        if !holds(struct_size as usize, std::mem::offset_of!(RawPluginV1, update_levels), PTR) {
            raw.update_levels = None;
        }
        let instance = CInstance {
            raw,
            struct_size: struct_size as usize,
            info: PluginInfo {
                kind: PluginKind::Reward,
                name: String::new(),
                version: String::new(),
                description: String::new(),
                capabilities: Capabilities::NONE,
            },
            _lib: Arc::clone(lib),
        };
        // From here on, dropping `instance` destroys the plugin.
        instance.described()
    }

    /// Reads and checks the description; on failure the instance is destroyed.
    fn described(mut self) -> Result<Self, LoadFailure> {
        let raw = self.raw;
        let bad = |m: String| Err(LoadFailure::Malformed(m));
        let Some(kind) = PluginKind::from_code(raw.kind) else {
            return bad(format!("unknown plugin kind {}", raw.kind));
        };
        // SAFETY: name and version are NULL or NUL-terminated strings valid until destroy.
        let (name, version) = unsafe { (copy_str(raw.name), copy_str(raw.version)) };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return bad("the name is NULL, empty or not UTF-8".into());
        };
        let Some(version) = version else {
            return bad("the version is NULL or not UTF-8".into());
        };
        let complete = match kind {
            PluginKind::Reward => raw.verdict_rewards.is_some() || raw.step_rewards.is_some(),
            PluginKind::Curriculum => raw.next_config.is_some(),
            PluginKind::EnvEngineer => raw.design.is_some() || raw.design_with_limits.is_some(),
            PluginKind::LevelSampler => raw.update_levels.is_some(),
        };
        if !complete {
            return bad(format!("a {kind} plugin without its required function"));
        }
        // What the optional functions offer; the declaration must say the same.
        let offered = [
            (Capabilities::SCORES_PLANS, raw.verdict_rewards.is_some(), "verdict_rewards"),
            (Capabilities::SCORES_STEPS, raw.step_rewards.is_some(), "step_rewards"),
            (Capabilities::REPLAYS, raw.sample_replay.is_some(), "sample_replay"),
        ];
        let from_functions = offered.iter().filter(|o| o.1).fold(Capabilities::NONE, |c, o| c.with(o.0));
        let capabilities = if holds(self.struct_size, FIRST_RELEASE_SIZE, std::mem::size_of::<u32>()) {
            let declared = Capabilities::from_bits(raw.capabilities);
            for &(flag, set, function) in &offered {
                let name = Capabilities::ALL.iter().find(|a| a.0 == flag).map_or("", |a| a.1);
                if declared.contains(flag) && !set {
                    return bad(format!("capabilities declare {name} but {function} is NULL"));
                }
                if set && !declared.contains(flag) {
                    return bad(format!("{function} is set but capabilities do not declare {name}"));
                }
            }
            declared
        } else {
            from_functions
        };
        capabilities.check(kind).map_err(LoadFailure::Malformed)?;
        self.info = PluginInfo { kind, name, version, description: "C plugin".into(), capabilities };
        Ok(self)
    }

    /// `Ok` for status 0, else the error with the plugin's message.
    fn status(&self, status: i32) -> Result<(), PluginError> {
        if status == 0 {
            return Ok(());
        }
        let message = self.raw.last_error.and_then(|f| {
            // SAFETY: `last_error` takes the instance's user_data and returns NULL or a string
            // valid until the next call on the instance; it is copied at once.
            unsafe { copy_str(f(self.raw.user_data)) }
        });
        Err(PluginError::from_code(status, message.unwrap_or_else(|| "no message".into())))
    }

    /// Copies a JSON string the plugin handed back.
    fn returned_text(&self, p: *const c_char, what: &str) -> Result<String, PluginError> {
        // SAFETY: the plugin returned NULL or a string valid until the next call on the
        // instance; it is copied at once.
        unsafe { copy_str(p) }
            .ok_or_else(|| PluginError::BadOutput(format!("the {what} is NULL or not UTF-8")))
    }

    fn unsupported(&self, what: &str) -> PluginError {
        PluginError::Unsupported(format!("{what} ({} {})", self.info.kind, self.info.name))
    }
}

impl Drop for CInstance {
    fn drop(&mut self) {
        if let Some(destroy) = self.raw.destroy {
            // SAFETY: called exactly once per successful entry call, with its user_data; the
            // library is still loaded (`_lib` is dropped after this).
            unsafe { destroy(self.raw.user_data) }
        }
    }
}

impl RewardFn for CInstance {
    fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        let f = self.raw.verdict_rewards.ok_or_else(|| self.unsupported("verdict rewards"))?;
        check_lengths(records.len(), out.len())?;
        // SAFETY: `records` and `out` are valid for `len` elements for the call; the record
        // layout is the header's (checked by a size test in floe-plugin-api).
        let status = unsafe { f(self.raw.user_data, records.as_ptr(), records.len(), out.as_mut_ptr()) };
        self.status(status)?;
        check_rewards(out)
    }

    fn step_rewards(&mut self, steps: &[StepOutcome], out: &mut [f32]) -> Result<(), PluginError> {
        let f = self.raw.step_rewards.ok_or_else(|| self.unsupported("step rewards"))?;
        check_lengths(steps.len(), out.len())?;
        // SAFETY: as in `verdict_rewards`.
        let status = unsafe { f(self.raw.user_data, steps.as_ptr(), steps.len(), out.as_mut_ptr()) };
        self.status(status)?;
        check_rewards(out)
    }
}

impl Curriculum for CInstance {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let f = self.raw.next_config.ok_or_else(|| self.unsupported("next_config"))?;
        let json = CString::new(history.to_json())
            .map_err(|_| PluginError::BadInput("the history contains a NUL byte".into()))?;
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: `json` is NUL-terminated and alive for the call, its length excludes the NUL;
        // `out` is a valid place to write to.
        let status = unsafe { f(self.raw.user_data, json.as_ptr(), json.as_bytes().len(), &mut out) };
        self.status(status)?;
        let text = self.returned_text(out, "configuration")?;
        RoundConfig::from_json(&text).map_err(|e| PluginError::BadOutput(format!("configuration: {e}")))
    }

    fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, PluginError> {
        let f = self.raw.sample_replay.ok_or_else(|| self.unsupported("replay sampling"))?;
        for r in pool {
            r.check(request)?;
        }
        let mut picked = vec![0_u32; request.count as usize];
        let mut len = 0_usize;
        // SAFETY: `pool` is valid for `pool.len()` records, `request` for one, `picked` has room
        // for `request.count` indices; `len` is a valid place to write to.
        let status = unsafe {
            f(self.raw.user_data, pool.as_ptr(), pool.len(), request, picked.as_mut_ptr(), &mut len)
        };
        self.status(status)?;
        if len > picked.len() {
            return Err(PluginError::BadOutput(format!(
                "{len} replay indices for a request of {}",
                request.count
            )));
        }
        picked.truncate(len);
        check_replay(&picked, pool.len(), request)?;
        Ok(picked)
    }
}

impl EnvEngineer for CInstance {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        let text = CString::new(context)
            .map_err(|_| PluginError::BadInput("the context contains a NUL byte".into()))?;
        let mut out: *const c_char = std::ptr::null();
        let (user_data, len) = (self.raw.user_data, text.as_bytes().len());
        let status = match (self.raw.design_with_limits, self.raw.design) {
            (Some(f), _) => {
                let record = limits.record();
                // SAFETY: as in `next_config`; `record` and the agent counts it points to live
                // until the call returns.
                unsafe { f(user_data, text.as_ptr(), len, &record, &mut out) }
            }
            // A plugin without `design_with_limits` reads the limits from the context's text.
            // SAFETY: as in `next_config`.
            (None, Some(f)) => unsafe { f(user_data, text.as_ptr(), len, &mut out) },
            (None, None) => return Err(self.unsupported("design")),
        };
        self.status(status)?;
        let reply = self.returned_text(out, "reply")?;
        EngineerReply::from_json(&reply).map_err(|e| PluginError::BadOutput(format!("reply: {e}")))
    }
}

impl LevelSampler for CInstance {
    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        let f = self.raw.update_levels.ok_or_else(|| self.unsupported("update_levels"))?;
        check_update(levels, episodes, scores)?;
        let n = levels.len();
        let mut weights = vec![0.0_f64; n];
        let mut refill = vec![0_u32; n];
        let (mut has_weights, mut refill_len) = (0_u32, 0_usize);
        let mut config: *const c_char = std::ptr::null();
        let scores_ptr = scores.map_or(std::ptr::null(), <[f32]>::as_ptr);
        // SAFETY: `levels` and `episodes` are valid for their lengths (records of the header's
        // layouts, checked by size tests), `scores` is NULL or valid for `episodes.len()`;
        // `weights` and `refill` have room for `n` each; the other outputs are valid places to
        // write to.
        let status = unsafe {
            f(
                self.raw.user_data,
                levels.as_ptr(),
                n,
                episodes.as_ptr(),
                episodes.len(),
                scores_ptr,
                weights.as_mut_ptr(),
                &mut has_weights,
                refill.as_mut_ptr(),
                &mut refill_len,
                &mut config,
            )
        };
        self.status(status)?;
        if refill_len > n {
            return Err(PluginError::BadOutput(format!("{refill_len} refill slots for a pool of {n}")));
        }
        refill.truncate(refill_len);
        let config = if config.is_null() {
            None
        } else {
            let text = self.returned_text(config, "configuration")?;
            Some(
                RoundConfig::from_json(&text)
                    .map_err(|e| PluginError::BadOutput(format!("the sampler's configuration: {e}")))?,
            )
        };
        let plan =
            LevelPlan { weights: (has_weights != 0).then_some(weights), refill, config, edits: Vec::new() };
        plan.check(n)?;
        Ok(plan)
    }
}
