//! `walksurf query`: JSON lines in, JSON lines out.

use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use walksurf::{Agent, DEFAULT_FLOOR_DOWN_CM, FloorMode, FloorOutcome, Surface, SweepOutcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A .wsurf file.
    file: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let surface = Surface::open(&args.file)?; // the error names the file
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // Our own BufReader, to see when the next read would block.
    let mut input = std::io::BufReader::new(stdin.lock());
    let mut buf = Vec::new();
    // Byte lines, not `lines()`: a line that is not UTF-8 gets an error line
    // like any other malformed line instead of ending the stream.
    while input.read_until(b'\n', &mut buf).context("reading stdin")? > 0 {
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let answer = match std::str::from_utf8(line) {
            Ok(line) => answer_line(&surface, line),
            Err(e) => json!({"result": "error", "message": format!("invalid UTF-8: {e}")}),
        };
        writeln!(out, "{answer}").context("writing stdout")?;
        buf.clear();
        // Answer everything read so far before waiting for more input, so a
        // caller that writes one line and waits for its answer is served.
        if input.buffer().is_empty() {
            out.flush().context("writing stdout")?;
        }
    }
    out.flush().context("writing stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// One output line for one input line; never fails.
pub fn answer_line(surface: &Surface, line: &str) -> Value {
    match parse_and_run(surface, line) {
        Ok(v) => v,
        Err(message) => json!({"result": "error", "message": message}),
    }
}

fn vec3(v: &Value, key: &str) -> Result<[f64; 3], String> {
    let a = v
        .get(key)
        .and_then(Value::as_array)
        .ok_or(format!("\"{key}\" must be an array of 3 numbers"))?;
    match a.as_slice() {
        [x, y, z] => Ok([num(x, key)?, num(y, key)?, num(z, key)?]),
        _ => Err(format!("\"{key}\" must be an array of 3 numbers")),
    }
}

fn num(v: &Value, key: &str) -> Result<f64, String> {
    v.as_f64().ok_or(format!("\"{key}\" must be numbers"))
}

fn opt_num(v: &Value, key: &str, default: f64) -> Result<f64, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(x) => num(x, key),
    }
}

/// What a JSON value is, for an error (the value itself may be long).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The ops a line may ask for, as the errors list them.
const OPS: &str = "\"find_floor\" or \"sweep\"";

fn parse_and_run(surface: &Surface, line: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!(
            "a query must be a JSON object {{\"op\":…,\"pos\":[x,y,z],…}}, got {}",
            kind(&v)
        ));
    }
    // `op` first: what else the line needs depends on it.
    let op = match v.get("op") {
        None => return Err(format!("missing \"op\" (expected {OPS})")),
        Some(Value::String(op)) => op.as_str(),
        Some(other) => return Err(format!("\"op\" must be a string ({OPS}), got {}", kind(other))),
    };
    if !matches!(op, "find_floor" | "sweep") {
        return Err(format!("unknown op \"{op}\" (expected {OPS})"));
    }
    let agent = Agent {
        radius_cm: opt_num(&v, "radius", Agent::DEFAULT.radius_cm)?,
        half_height_cm: opt_num(&v, "half_height", Agent::DEFAULT.half_height_cm)?,
    };
    let pos = vec3(&v, "pos")?;
    if op == "find_floor" {
        let down = opt_num(&v, "down", DEFAULT_FLOOR_DOWN_CM)?;
        let mode = match v.get("mode") {
            None | Some(Value::Null) => FloorMode::Capsule,
            Some(Value::String(m)) if m == "capsule" => FloorMode::Capsule,
            Some(Value::String(m)) if m == "line" => FloorMode::LineTrace,
            Some(Value::String(m)) => {
                return Err(format!("unknown mode \"{m}\" (expected \"line\" or \"capsule\")"));
            }
            Some(other) => return Err(format!("\"mode\" must be \"line\" or \"capsule\", got {}", kind(other))),
        };
        Ok(floor_json(surface.find_floor(pos, down, agent, mode)))
    } else {
        let d = v
            .get("delta")
            .and_then(Value::as_array)
            .ok_or("\"delta\" must be an array of 2 numbers")?;
        let delta = match d.as_slice() {
            [x, y] => [num(x, "delta")?, num(y, "delta")?],
            _ => return Err("\"delta\" must be an array of 2 numbers".into()),
        };
        Ok(sweep_json(surface.sweep_horizontal(pos, delta, agent)))
    }
}

pub fn floor_json(o: FloorOutcome) -> Value {
    match o {
        FloorOutcome::Floor(h) => json!({
            "result": "floor", "floor_dist": h.floor_dist, "location": h.location,
            "impact_point": h.impact_point, "normal": h.normal, "walkable": h.walkable,
        }),
        FloorOutcome::NoFloor => json!({"result": "no_floor"}),
        FloorOutcome::Fallback(r) => json!({"result": "fallback", "reason": r.as_str()}),
    }
}

pub fn sweep_json(o: SweepOutcome) -> Value {
    match o {
        SweepOutcome::Clear => json!({"result": "clear"}),
        SweepOutcome::Hit(h) => json!({
            "result": "hit", "time": h.time, "distance": h.distance, "location": h.location,
            "impact_point": h.impact_point, "normal": h.normal,
        }),
        SweepOutcome::Fallback(r) => json!({"result": "fallback", "reason": r.as_str()}),
    }
}
