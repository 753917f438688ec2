//! The shape of a reply, for a language model to be held to: its JSON schema (for an endpoint's
//! `response_format`) and a GBNF grammar (for llama.cpp), both derived from the [`DesignLimits`].

use floe_plugin_api::design::DesignLimits;

/// The reply's shape within [`DesignLimits`], for a language model to be held to.
pub trait ReplyFormat {
    /// The reply's JSON schema: `{"rationale", "config"}` with exactly the configuration's
    /// fields and these limits.
    #[must_use]
    fn json_schema(&self) -> serde_json::Value;

    /// A GBNF grammar (llama.cpp's) of replies within these limits: the reply's shape, map sizes
    /// and agent counts from the allowed values, ratios as decimals with up to two places bounded
    /// by their ranges, a rationale of 1 to 240 plain characters. Data ratios are not made to add
    /// up to 1 (a grammar cannot); [`crate::limits::Adoption::parse_reply`] still validates and
    /// clamps.
    #[must_use]
    fn gbnf(&self) -> String;
}

impl ReplyFormat for DesignLimits {
    fn json_schema(&self) -> serde_json::Value {
        let mut config_props = serde_json::json!({
            "sizes": {
                "type": "array", "minItems": 1, "maxItems": self.max_sizes,
                "items": {
                    "type": "object", "additionalProperties": false,
                    "required": ["size", "data_ratio", "hole_ratio", "wait_ratio"],
                    "properties": {
                        "size": {"type": "integer", "minimum": self.min_size, "maximum": self.max_size},
                        "data_ratio": {"type": "number", "minimum": 0, "maximum": 1},
                        "hole_ratio": {"type": "number", "minimum": 0, "maximum": self.max_hole_ratio},
                        "wait_ratio": {"type": "number", "minimum": 0, "maximum": 1}
                    }
                }
            },
            "agents": {"type": "array", "minItems": 1, "items": {"type": "integer", "enum": self.agents}}
        });
        let mut required = vec!["sizes", "agents"];
        if self.max_replay_fraction > 0.0 {
            config_props["replay_fraction"] =
                serde_json::json!({"type": "number", "minimum": 0, "maximum": self.max_replay_fraction});
            required.push("replay_fraction");
        }
        serde_json::json!({
            "type": "object", "additionalProperties": false, "required": ["rationale", "config"],
            "properties": {
                "rationale": {"type": "string", "maxLength": 240},
                "config": {"type": "object", "additionalProperties": false, "required": required,
                           "properties": config_props}
            }
        })
    }

    fn gbnf(&self) -> String {
        let alts = |v: Vec<String>| v.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(" | ");
        let sizes = alts((self.min_size..=self.max_size).map(|s| s.to_string()).collect());
        let agents = alts(self.agents.iter().map(ToString::to_string).collect());
        let max_items = self.max_sizes.max(1);
        let more_sizes =
            if max_items > 1 { format!(" (\", \" size){{0,{}}}", max_items - 1) } else { String::new() };
        let more_agents = if self.agents.len() > 1 {
            format!(" (\", \" agent){{0,{}}}", self.agents.len() - 1)
        } else {
            String::new()
        };
        let replay =
            if self.max_replay_fraction > 0.0 { " \", \\\"replay_fraction\\\": \" replay" } else { "" };
        let mut g = format!(
            "root ::= \"{{\\\"rationale\\\": \" text \", \\\"config\\\": {{\\\"sizes\\\": [\" size{more_sizes} \"], \\\"agents\\\": [\" agent{more_agents} \"]\"{replay} \"}}}}\"\n\
             size ::= \"{{\\\"size\\\": \" side \", \\\"data_ratio\\\": \" unit \", \\\"hole_ratio\\\": \" hole \", \\\"wait_ratio\\\": \" unit \"}}\"\n\
             side ::= {sizes}\n\
             agent ::= {agents}\n\
             text ::= \"\\\"\" [a-zA-Z0-9 ,.;:()%+=/-]{{1,240}} \"\\\"\"\n\
             unit ::= {}\n\
             hole ::= {}\n",
            decimal_rule(100),
            decimal_rule((self.max_hole_ratio * 100.0).floor() as u32)
        );
        if self.max_replay_fraction > 0.0 {
            g.push_str(&format!(
                "replay ::= {}\n",
                decimal_rule((self.max_replay_fraction * 100.0).floor() as u32)
            ));
        }
        g
    }
}

/// A GBNF alternative for the decimals from 0 to `max` hundredths (at most 100), written with
/// at most two places: `0`, `0.d`, `0.dd`, and `1`, `1.0`, `1.00` when `max` is 100.
fn decimal_rule(max: u32) -> String {
    let max = max.min(100);
    let mut alts = vec!["\"0\"".to_string()];
    if max == 100 {
        alts.push("\"0.\" [0-9] [0-9]?".into());
        alts.push("\"1\" (\".0\" \"0\"?)?".into());
        return alts.join(" | ");
    }
    let (tens, ones) = (max / 10, max % 10);
    if tens > 0 {
        // 0.0x .. 0.(tens-1)x: any second digit.
        alts.push(format!("\"0.\" [0-{}] [0-9]?", tens - 1));
    }
    // 0.tens, 0.tens0 .. 0.tens<ones>.
    alts.push(format!("\"0.{tens}\" [0-{ones}]?"));
    alts.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_bounded() {
        assert_eq!(decimal_rule(40), "\"0\" | \"0.\" [0-3] [0-9]? | \"0.4\" [0-0]?");
        assert_eq!(decimal_rule(5), "\"0\" | \"0.0\" [0-5]?");
        assert!(decimal_rule(100).contains("\"1\""));
        let g = DesignLimits::default().gbnf();
        assert!(g.starts_with("root ::= "), "{g}");
        assert!(g.contains("side ::= \"3\" | \"4\" | \"5\" | \"6\""), "{g}");
        assert!(g.contains("replay ::= "), "{g}");
        let schema = DesignLimits::default().json_schema();
        assert_eq!(
            schema["properties"]["config"]["properties"]["sizes"]["items"]["properties"]["size"]["maximum"],
            6
        );
    }
}
