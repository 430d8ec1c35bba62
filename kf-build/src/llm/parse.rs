//! Reading an answer: the fenced WGSL block, the JSON block with the launch rule and the override
//! candidates, and the reasons an answer cannot be a candidate.
//!
//! Answers are untrusted text. Nothing here panics or gives up on the run: an answer without code,
//! or with a JSON block that does not parse, becomes a failure with its reason (level 0 of the
//! ladder), and everything else goes to the evaluator, which judges the code itself. A truncated
//! answer (a fence that never closes) keeps what it has, so naga reports where it ends.

use kf_runtime::expr::SizeExpr;
use kf_runtime::program::{Dispatch, DispatchMode};
use kf_runtime::resolve::ResolvedKernel;
use std::collections::BTreeSet;

/// One fenced block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The info string after the fence, lowercased (`wgsl`, `json`, or empty).
    pub lang: String,
    /// The text between the fences.
    pub body: String,
    /// Whether a closing fence was found.
    pub closed: bool,
}

/// Every fenced block of `text`, in order (a fence is three or more backticks or tildes at the
/// start of a line, after optional indentation).
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, char, String)> = None; // fence, indent, char, lang
    let mut body = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence_char = trimmed.chars().next();
        let fence_len = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        match &open {
            None => {
                if let Some(c @ ('`' | '~')) = fence_char
                    && fence_len(c) >= 3
                {
                    let n = fence_len(c);
                    let lang = trimmed[n..].trim().to_lowercase();
                    let lang = lang.split_whitespace().next().unwrap_or("").to_owned();
                    open = Some((c.to_string().repeat(n), indent, c, lang));
                    body.clear();
                }
            }
            Some((fence, _, c, lang)) => {
                if fence_char == Some(*c)
                    && fence_len(*c) >= fence.len()
                    && trimmed[fence_len(*c)..].trim().is_empty()
                {
                    out.push(Block {
                        lang: lang.clone(),
                        body: std::mem::take(&mut body),
                        closed: true,
                    });
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    if let Some((_, _, _, lang)) = open {
        out.push(Block {
            lang,
            body,
            closed: false,
        });
    }
    out
}

/// What an answer proposes.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The WGSL.
    pub wgsl: String,
    /// The launch rule, when the JSON block gives one.
    pub launch: Option<Dispatch>,
    /// Values for overrides (`"constants"` in the JSON block).
    pub constants: Vec<(String, f64)>,
    /// Candidate values per override (`"overrides"`), for the parameter operator.
    pub params: Vec<(String, Vec<f64>)>,
    /// Things worth telling the user and the next prompt (a second WGSL block ignored, a
    /// truncated block).
    pub notes: Vec<String>,
}

/// Why an answer is not a candidate.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unusable {
    /// No code block.
    #[error("the answer has no fenced WGSL block{0}")]
    NoCode(String),
    /// The JSON block does not parse or does not fit the contract.
    #[error("the answer's JSON block is unusable: {0}")]
    Json(String),
}

/// Reads `text` as an answer for `kernel`.
pub fn answer(
    text: &str,
    kernel: &ResolvedKernel,
    finish_reason: Option<&str>,
) -> Result<Answer, Unusable> {
    let all = blocks(text);
    let looks_like_wgsl = |b: &Block| {
        b.body.contains("@compute") || b.body.contains("fn ") && b.body.contains("@group")
    };
    let mut code: Vec<&Block> = all.iter().filter(|b| b.lang == "wgsl").collect();
    if code.is_empty() {
        code = all
            .iter()
            .filter(|b| b.lang != "json" && looks_like_wgsl(b))
            .collect();
    }
    let mut notes = Vec::new();
    let Some(first) = code.first() else {
        let why = if finish_reason == Some("length") {
            " (the answer was cut at the token limit)".to_owned()
        } else if text.trim().is_empty() {
            " (the answer is empty)".to_owned()
        } else {
            String::new()
        };
        return Err(Unusable::NoCode(why));
    };
    if code.len() > 1 {
        notes.push(format!("{} WGSL blocks; the first was used", code.len()));
    }
    if !first.closed {
        notes.push(if finish_reason == Some("length") {
            "the WGSL block was cut at the token limit".to_owned()
        } else {
            "the WGSL block is not closed".to_owned()
        });
    }
    let mut answer = Answer {
        wgsl: first.body.clone(),
        launch: None,
        constants: Vec::new(),
        params: Vec::new(),
        notes,
    };
    let json: Vec<&Block> = all
        .iter()
        .filter(|b| b.lang == "json" || (b.lang.is_empty() && b.body.trim_start().starts_with('{')))
        .collect();
    if let Some(block) = json.first() {
        contract_json(&block.body, kernel, &mut answer).map_err(Unusable::Json)?;
    }
    Ok(answer)
}

fn contract_json(text: &str, kernel: &ResolvedKernel, answer: &mut Answer) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| format!("{e}"))?;
    let object = value.as_object().ok_or("it is not a JSON object")?;
    let sizes: BTreeSet<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    if let Some(launch) = object.get("launch") {
        answer.launch = Some(launch_rule(launch, &sizes)?);
    }
    if let Some(o) = object.get("overrides") {
        let o = o
            .as_object()
            .ok_or("`overrides` is not an object of name: [values]")?;
        for (name, values) in o {
            let list: Vec<f64> = match values {
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|v| {
                        v.as_f64().ok_or_else(|| {
                            format!("override `{name}` has a non-number candidate {v}")
                        })
                    })
                    .collect::<Result<_, _>>()?,
                serde_json::Value::Number(n) => vec![n.as_f64().unwrap_or(0.0)],
                other => {
                    return Err(format!(
                        "override `{name}` has candidates {other}, not a list of numbers"
                    ));
                }
            };
            if list.is_empty() {
                return Err(format!("override `{name}` has no candidate values"));
            }
            answer.params.push((name.clone(), list));
        }
    }
    if let Some(c) = object.get("constants") {
        let c = c
            .as_object()
            .ok_or("`constants` is not an object of name: value")?;
        for (name, v) in c {
            let v = v
                .as_f64()
                .ok_or_else(|| format!("constant `{name}` is not a number"))?;
            answer.constants.push((name.clone(), v));
        }
    }
    Ok(())
}

/// `"grid(n, m)"`, `"workgroups(rows)"`, or `{"mode": "grid", "size": ["n", "m"]}`.
fn launch_rule(value: &serde_json::Value, sizes: &BTreeSet<&str>) -> Result<Dispatch, String> {
    let (mode, parts): (DispatchMode, Vec<String>) = match value {
        serde_json::Value::String(s) => {
            let s = s.trim();
            let (mode, rest) = if let Some(r) = s.strip_prefix("grid") {
                (DispatchMode::Grid, r)
            } else if let Some(r) = s.strip_prefix("workgroups") {
                (DispatchMode::Workgroups, r)
            } else {
                return Err(format!(
                    "launch rule `{s}` is neither grid(..) nor workgroups(..)"
                ));
            };
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("launch rule `{s}` is not of the form grid(x, y, z)"))?;
            (mode, split_top_level(inner))
        }
        serde_json::Value::Object(o) => {
            let mode = match o.get("mode").and_then(|m| m.as_str()) {
                Some("grid") => DispatchMode::Grid,
                Some("workgroups") => DispatchMode::Workgroups,
                other => {
                    return Err(format!(
                        "launch mode {other:?} is neither \"grid\" nor \"workgroups\""
                    ));
                }
            };
            let size = o
                .get("size")
                .and_then(|s| s.as_array())
                .ok_or("launch rule without a `size` list")?;
            let parts = size
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => Ok(s.clone()),
                    serde_json::Value::Number(n) => Ok(n.to_string()),
                    other => Err(format!("launch size {other} is not an expression")),
                })
                .collect::<Result<_, _>>()?;
            (mode, parts)
        }
        other => {
            return Err(format!(
                "launch rule {other} is not a string like \"grid(n)\""
            ));
        }
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!(
            "a launch rule has 1 to 3 dimensions, not {}",
            parts.len()
        ));
    }
    let mut size = [SizeExpr::lit(1), SizeExpr::lit(1), SizeExpr::lit(1)];
    for (i, p) in parts.iter().enumerate() {
        let e = SizeExpr::parse(p.trim()).map_err(|e| e.to_string())?;
        if let Some(unknown) = e.names().find(|n| !sizes.contains(n)) {
            return Err(format!(
                "the launch rule uses `{unknown}`, which is not a named size (the sizes are {})",
                sizes.iter().copied().collect::<Vec<_>>().join(", ")
            ));
        }
        size[i] = e;
    }
    Ok(Dispatch { mode, size })
}

fn split_top_level(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel() -> ResolvedKernel {
        let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 1.0; }";
        let (spec, _) = kf_runtime::syntax::parse_spec(
            r#"source = "", sizes(n = 64, m = 2), bind(y = output(n * m)), grid = (n, m)"#
                .parse()
                .unwrap(),
        )
        .unwrap();
        kf_runtime::resolve::resolve("K", &spec, wgsl, "k.wgsl").unwrap()
    }

    #[test]
    fn fenced_blocks_with_tags_tildes_and_indentation() {
        let text = "Intro\n```wgsl\nfn a() {}\n```\nthen\n  ~~~~ json extra\n{\"x\": 1}\n  ~~~~\n```\nplain\n```\n````\nunclosed\n";
        let b = blocks(text);
        assert_eq!(b.len(), 4);
        assert_eq!(
            (b[0].lang.as_str(), b[0].body.as_str(), b[0].closed),
            ("wgsl", "fn a() {}\n", true)
        );
        assert_eq!(
            (b[1].lang.as_str(), b[1].body.trim()),
            ("json", "{\"x\": 1}")
        );
        assert_eq!((b[2].lang.as_str(), b[2].body.as_str()), ("", "plain\n"));
        assert_eq!((b[3].body.as_str(), b[3].closed), ("unclosed\n", false));
        // A shorter fence inside a longer one does not close it.
        let nested = "````wgsl\n```\nx\n````\n";
        assert_eq!(blocks(nested)[0].body, "```\nx\n");
    }

    #[test]
    fn an_answer_gives_code_launch_rule_and_override_candidates() {
        let text = r#"Here is a faster kernel.
```wgsl
override TILE: u32 = 8u;
@compute @workgroup_size(64) fn main() {}
```
```json
{"launch": "grid((n + 3) / 4, m)", "overrides": {"TILE": [4, 8, 16]}, "constants": {"TILE": 8}}
```"#;
        let a = answer(text, &kernel(), Some("stop")).unwrap();
        assert!(a.wgsl.starts_with("override TILE"));
        let launch = a.launch.unwrap();
        assert_eq!(launch.to_string(), "grid((n + 3) / 4, m, 1)");
        assert_eq!(a.params, vec![("TILE".to_owned(), vec![4.0, 8.0, 16.0])]);
        assert_eq!(a.constants, vec![("TILE".to_owned(), 8.0)]);
        assert!(a.notes.is_empty());
        let object_form = "```wgsl\n@compute @workgroup_size(1) fn main() {}\n```\n```json\n{\"launch\": {\"mode\": \"workgroups\", \"size\": [\"n\", 2]}}\n```";
        let a = answer(object_form, &kernel(), None).unwrap();
        assert_eq!(a.launch.unwrap().to_string(), "workgroups(n, 2, 1)");
    }

    #[test]
    fn untagged_code_is_found_and_json_is_optional() {
        let text = "```\n@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(1) fn main() {}\n```";
        let a = answer(text, &kernel(), None).unwrap();
        assert!(a.wgsl.contains("@compute"));
        assert_eq!(a.launch, None, "the parent's launch rule is kept");
    }

    #[test]
    fn malformed_answers_are_reasons_not_crashes() {
        let k = kernel();
        let check = |text: &str, finish: Option<&str>, says: &str| {
            let e = answer(text, &k, finish).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        };
        check(
            "I would tile the loop and use shared memory.",
            None,
            "no fenced WGSL block",
        );
        check("", None, "empty");
        check(
            "Let me think about this step by step",
            Some("length"),
            "token limit",
        );
        check("```python\nprint(1)\n```", None, "no fenced WGSL");
        let code = "```wgsl\n@compute @workgroup_size(1) fn main() {}\n```\n";
        check(
            &format!("{code}```json\n{{\"launch\": \"grid(q)\"}}\n```"),
            None,
            "`q`, which is not a named size",
        );
        check(
            &format!("{code}```json\n{{\"launch\": \"grid(n\"\n```"),
            None,
            "JSON block is unusable",
        );
        check(
            &format!("{code}```json\n{{\"launch\": \"tiles(n)\"}}\n```"),
            None,
            "neither grid",
        );
        check(
            &format!("{code}```json\n{{\"overrides\": {{\"T\": []}}}}\n```"),
            None,
            "no candidate",
        );
        check(
            &format!("{code}```json\n{{\"overrides\": {{\"T\": [\"big\"]}}}}\n```"),
            None,
            "non-number",
        );
        check(
            &format!("{code}```json\n{{\"launch\": \"grid(n, m, 1, 1)\"}}\n```"),
            None,
            "1 to 3",
        );
        check(
            &format!("{code}```json\n[1, 2]\n```"),
            None,
            "not a JSON object",
        );
    }

    #[test]
    fn truncated_and_duplicated_code_is_kept_with_a_note() {
        let text = "```wgsl\n@compute @workgroup_size(1) fn main() {\n  let x = 1;\n";
        let a = answer(text, &kernel(), Some("length")).unwrap();
        assert!(a.wgsl.contains("let x = 1;"));
        assert_eq!(a.notes, vec!["the WGSL block was cut at the token limit"]);
        let two = "```wgsl\n@compute fn a() {}\n```\n```wgsl\n@compute fn b() {}\n```";
        let a = answer(two, &kernel(), None).unwrap();
        assert!(a.wgsl.contains("fn a"));
        assert_eq!(a.notes, vec!["2 WGSL blocks; the first was used"]);
    }
}
