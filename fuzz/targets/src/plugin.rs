//! The plugin interface's JSON: round configurations, histories and engineer replies.

use floe_plugin_api::{EngineerReply, History, RoundConfig};

/// `RoundConfig::from_json`: a parsed configuration is valid, reads back equal from its JSON,
/// and the generator jobs it makes are valid and share out exactly the samples asked for.
pub fn round_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match RoundConfig::from_json(text) {
        Ok(cfg) => check_config(&cfg),
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// `History::from_json`: a parsed history is valid, reads back equal from its JSON, its rounds'
/// configurations are valid, and it can name the next round.
pub fn history(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match History::from_json(text) {
        Ok(h) => {
            assert_eq!(h.validate(), Ok(()));
            let json = h.to_json();
            assert_eq!(History::from_json(&json).as_ref(), Ok(&h), "JSON round trip of {json}");
            let next = h.next_round();
            match h.last() {
                Some(last) => assert!(next > last.round, "round {next} follows round {}", last.round),
                None => assert_eq!(next, 0),
            }
            for r in &h.rounds {
                check_config(&r.config);
                for res in &r.results {
                    assert_eq!(r.result(res.size), Some(res));
                    assert!(res.optimal_rate <= res.valid_rate);
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// `EngineerReply::from_json`: a parsed reply's configuration is valid and the reply reads back
/// equal from its JSON.
pub fn engineer_reply(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match EngineerReply::from_json(text) {
        Ok(reply) => {
            let json = reply.to_json();
            assert_eq!(EngineerReply::from_json(&json).as_ref(), Ok(&reply), "JSON round trip of {json}");
            check_config(&reply.config);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// What a validated configuration promises.
fn check_config(cfg: &RoundConfig) {
    assert_eq!(cfg.validate(), Ok(()));
    let json = cfg.to_json();
    assert_eq!(RoundConfig::from_json(&json).as_ref(), Ok(cfg), "JSON round trip of {json}");
    for s in &cfg.sizes {
        assert_eq!(cfg.size(s.size), Some(s));
    }
    for samples in [0, 1, 7, 1000] {
        let jobs = cfg.generator_configs(samples, 1);
        for job in &jobs {
            assert!(job.validate().is_ok(), "a valid configuration makes an invalid job {job:?}: {json}");
            assert!(job.count > 0);
        }
        let total: usize = jobs.iter().map(|j| j.count).sum();
        assert_eq!(total, samples, "generator jobs for {samples} samples: {json}");
        let (new, replayed) = cfg.split_budget(samples);
        assert_eq!(new + replayed, samples);
    }
}
