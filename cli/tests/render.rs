//! `floe render --png / --gif` end to end: the files decode, have the size the grid gives and a
//! frame per time step plus the hold, change with the plan, and mark each kind of failure in red
//! on its cell at its time step; bad input is exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn floe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-render-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A file of its own for each call: tests run side by side, and one writing `inst.json` while
/// another reads it would hand the reader an empty file.
fn file(name: &str, contents: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = dir().join(format!("{n}-{name}"));
    std::fs::write(&p, contents).expect("write temp file");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A 3×3 map with a hole in the middle; agent 0 from the top-left corner to the top-right one,
/// agent 1 along the bottom row.
const INST: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#;

/// The picture of a 3×3 map: cells of 96 pixels (560 / (3 + 2), at most 96), the grid 288 pixels
/// across with a margin of a quarter cell, in the narrowest picture (480 pixels); 80 pixels of
/// header above, 34 of key below.
const SIZE: (u32, u32) = (480, 80 + 288 + 2 * 24 + 34);
/// With an agent off the grid, the margin is a cell.
const SIZE_OFF_GRID: (u32, u32) = (480, 80 + 288 + 2 * 96 + 34);
const CELL: u32 = 96;

/// An RGB picture.
#[derive(PartialEq, Eq)]
struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl std::fmt::Debug for Picture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{} picture", self.width, self.height)
    }
}

impl Picture {
    /// Pixels of the failure's red (220, 20, 60, or near it after blending or a palette) in the
    /// cell (row, col), which may be in the margin (−1 or the grid's side).
    fn red_in(&self, (r, c): (i64, i64)) -> usize {
        // The grid is centred across; below the header, after the margin.
        let margin = (self.height - 80 - 34 - 3 * CELL) / 2;
        let origin = ((self.width - 3 * CELL) / 2, 80 + margin);
        let x0 = (i64::from(origin.0) + c * i64::from(CELL)) as u32;
        let y0 = (i64::from(origin.1) + r * i64::from(CELL)) as u32;
        let mut n = 0;
        for y in y0..y0 + CELL {
            for x in x0..x0 + CELL {
                let i = ((y * self.width + x) * 3) as usize;
                let (r, g, b) = (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]);
                n += usize::from(r >= 180 && g <= 90 && b <= 110);
            }
        }
        n
    }

    /// Red pixels anywhere on the grid and its margin (a ring of cells around it when an agent
    /// is off the grid).
    fn red_on_board(&self) -> usize {
        let ring = if (self.width, self.height) == SIZE_OFF_GRID { 1 } else { 0 };
        let cells = move || -ring..3 + ring;
        cells().flat_map(|r| cells().map(move |c| (r, c))).map(|cell| self.red_in(cell)).sum()
    }
}

fn decode_png(path: &Path) -> Picture {
    let bytes = std::fs::read(path).expect("the PNG file");
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    Picture { width: info.width, height: info.height, rgb: buf }
}

/// The GIF's frames as RGB pictures, with their delays (hundredths of a second).
fn decode_gif(path: &Path) -> Vec<(Picture, u16)> {
    let bytes = std::fs::read(path).expect("the GIF file");
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::io::Cursor::new(bytes)).expect("a GIF");
    let (w, h) = (u32::from(dec.width()), u32::from(dec.height()));
    let mut frames = Vec::new();
    while let Some(f) = dec.read_next_frame().expect("a frame") {
        assert_eq!((u32::from(f.width), u32::from(f.height), f.left, f.top), (w, h, 0, 0), "whole frames");
        let rgb = f.buffer.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
        frames.push((Picture { width: w, height: h, rgb }, f.delay));
    }
    frames
}

/// Renders `plan` (move strings, or none) to a PNG and a GIF named after `name`; checks that it
/// succeeds and names both files on stderr.
fn render(name: &str, plan: Option<&str>) -> (Picture, Vec<(Picture, u16)>) {
    let inst = file("inst.json", INST);
    let (png, gif) = (dir().join(format!("{name}.png")), dir().join(format!("{name}.gif")));
    let plan_file = plan.map(|p| file(&format!("{name}-plan.json"), p));
    let mut args = vec!["render", "-i", s(&inst), "--png", s(&png), "--gif", s(&gif)];
    if let Some(p) = &plan_file {
        args.extend(["-p", s(p)]);
    }
    let o = floe(&args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    assert!(o.stdout.is_empty(), "{name}: the pictures replace the text frames");
    assert!(stderr(&o).contains(s(&png)) && stderr(&o).contains(s(&gif)), "{}", stderr(&o));
    (decode_png(&png), decode_gif(&gif))
}

#[test]
fn a_valid_plan_has_a_frame_per_step_and_the_hold_and_no_red_on_the_board() {
    let (png, frames) = render("valid", Some(r#"{"moves": ["RR", "RR"]}"#));
    assert_eq!((png.width, png.height), SIZE);
    // t = 0, 1, 2 and the hold.
    let delays: Vec<u16> = frames.iter().map(|f| f.1).collect();
    assert_eq!(delays, [70, 70, 70, 300]);
    assert!(frames.iter().all(|(f, _)| (f.width, f.height) == SIZE));
    assert_eq!(png.red_on_board(), 0);
    assert!(frames.iter().all(|(f, _)| f.red_on_board() == 0));
    // The agents move: every step's frame differs from the one before.
    for pair in frames.windows(2) {
        assert_ne!(pair[0].0, pair[1].0);
    }
    let o = floe(&[
        "render",
        "-i",
        s(&file("inst.json", INST)),
        "-p",
        s(&file("v.json", r#"{"moves": ["RR", "RR"]}"#)),
        "--gif",
        s(&dir().join("v.gif")),
    ]);
    assert!(
        stderr(&o).contains("4 frames: t = 0 to 2 and the hold") && stderr(&o).contains("a valid plan"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn another_plan_gives_other_pixels_and_the_instance_alone_one_frame() {
    let (a, fa) = render("plan-a", Some(r#"{"moves": ["RR", "RR"]}"#));
    // Agent 1 waits first: one step more, the same end.
    let (b, fb) = render("plan-b", Some(r#"{"moves": ["RR", "WRR"]}"#));
    assert_ne!(a, b);
    assert_eq!((fa.len(), fb.len()), (4, 5));
    let (alone, frames) = render("alone", None);
    assert_eq!((alone.width, alone.height), SIZE);
    assert_eq!(frames.len(), 1, "nothing to play: one frame");
    assert_ne!(alone, a);
    // A larger map, a taller picture: 8×8 cells of 560 / 10 = 56 pixels, margins of 14.
    let inst = file(
        "eight.json",
        r#"{"grid": ["FFFFFFFF", "FFFFFFFF", "FFFFFFFF", "FFFFFFFF", "FFFFFFFF", "FFFFFFFF", "FFFFFFFF", "FFFFFFFF"], "agents": [{"start": [0, 0], "goal": [7, 7]}]}"#,
    );
    let png = dir().join("eight.png");
    let o = floe(&["render", "-i", s(&inst), "--png", s(&png)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = decode_png(&png);
    assert_eq!((p.width, p.height), (480, 80 + 8 * 56 + 2 * 14 + 34));
}

/// Each failure kind: the verifier's time step gives the frames, and the red mark is on the
/// failure's cells in the frame of that step (and the held one), not before.
#[test]
fn each_failure_is_marked_on_its_cells_at_its_step() {
    // (name, plan, the failure's time step, the cells marked)
    type Case = (&'static str, &'static str, usize, &'static [(i64, i64)]);
    let cases: [Case; 5] = [
        // Agent 1 walks up, then right into the hole at (1, 1) at t = 2.
        ("hole", r#"{"moves": ["RR", "UR"]}"#, 2, &[(1, 1)]),
        // Both agents step onto (1, 0) at t = 1.
        ("vertex", r#"{"moves": ["D", "U"]}"#, 1, &[(1, 0)]),
        // Agent 0 steps up off the grid at t = 1: the mark is in the margin above (0, 0).
        ("out-of-bounds", r#"{"moves": ["U", "RR"]}"#, 1, &[(-1, 0)]),
        // Agent 0 stops one cell short of its goal: t = 2, its cell and its goal.
        ("goal", r#"{"moves": ["R", "RR"]}"#, 2, &[(0, 1), (0, 2)]),
        // Agent 0's path jumps two cells at t = 1.
        ("jump", r#"{"paths": [[[0, 0], [0, 2]], [[2, 0], [2, 1], [2, 2]]]}"#, 1, &[(0, 2)]),
    ];
    for (name, plan, t, cells) in cases {
        let (png, frames) = render(name, Some(plan));
        assert_eq!(frames.len(), t + 2, "{name}: t = 0 to {t} and the hold");
        let size = if name == "out-of-bounds" { SIZE_OFF_GRID } else { SIZE };
        assert_eq!((png.width, png.height), size, "{name}");
        assert!(frames.iter().all(|(f, _)| (f.width, f.height) == size), "{name}");
        for &cell in cells {
            assert!(png.red_in(cell) > 100, "{name}: no red on {cell:?} in the PNG");
            assert!(frames[t].0.red_in(cell) > 100, "{name}: no red on {cell:?} at t = {t}");
            assert!(frames[t + 1].0.red_in(cell) > 100, "{name}: no red on {cell:?} in the hold");
        }
        for (k, (f, _)) in frames[..t].iter().enumerate() {
            assert_eq!(f.red_on_board(), 0, "{name}: red at t = {k}, before the failure");
        }
    }
    // A swap: agents side by side exchange cells at t = 1; both cells are marked.
    let inst = file(
        "swap.json",
        r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [0, 1], "goal": [0, 0]}]}"#,
    );
    let (png, gif) = (dir().join("swap.png"), dir().join("swap.gif"));
    let plan = file("swap-plan.json", r#"{"moves": ["R", "L"]}"#);
    let o = floe(&["render", "-i", s(&inst), "-p", s(&plan), "--png", s(&png), "--gif", s(&gif)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("an invalid plan: edge_conflict at t = 1"), "{}", stderr(&o));
    let png = decode_png(&png);
    assert!(png.red_in((0, 0)) > 100 && png.red_in((0, 1)) > 100);
    let frames = decode_gif(&gif);
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0].0.red_on_board(), 0);
}

#[test]
fn answers_that_cannot_be_played_are_drawn_with_the_reason() {
    // A plan for one agent on a 2-agent instance: the instance, one frame.
    let (png, frames) = render("count", Some(r#"{"moves": ["RR"]}"#));
    assert_eq!(frames.len(), 1);
    let (alone, _) = render("alone-again", None);
    assert_ne!(png, alone, "the reason is written above the grid");
    let inst = file("inst.json", INST);
    let text = file("garbled.txt", "no plan in here");
    let out = dir().join("garbled.png");
    let o = floe(&["render", "-i", s(&inst), "-p", s(&text), "--png", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("the answer cannot be read"), "{}", stderr(&o));
    assert_eq!(decode_png(&out).width, SIZE.0);
}

#[test]
fn bad_input_is_exit_2_with_the_reason() {
    let two = file("two.jsonl", &format!("{INST}\n{INST}\n"));
    let out = dir().join("bad.png");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["render", "-i", s(&two), "--png", s(&out)], "choose it with --nth N (1 to 2)"),
        (vec!["render", "-i", s(&two), "--png", s(&out), "--nth", "3"], "--nth 3"),
        (vec!["render", "-i", s(&two), "--nth", "1"], "give --png or --gif"),
        (
            vec!["render", "-i", s(&two), "--gif", "/nonexistent/dir/x.gif", "--nth", "2"],
            "/nonexistent/dir/x.gif: cannot write",
        ),
        (
            vec!["render", "-i", s(&two), "-p", "/nonexistent/plan.json", "--png", s(&out), "--nth", "1"],
            "/nonexistent/plan.json",
        ),
    ];
    for (args, needle) in cases {
        let o = floe(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let bad_plan = file("bad-plan.json", r#"{"moves": ["RZ", "RR"]}"#);
    let o = floe(&["render", "-i", s(&file("inst.json", INST)), "-p", s(&bad_plan), "--png", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad-plan.json") && stderr(&o).contains("unknown move letter 'Z'"),
        "{}",
        stderr(&o)
    );
    // The second instance of the file, drawn.
    let o = floe(&["render", "-i", s(&two), "--png", s(&out), "--nth", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode_png(&out).width, SIZE.0);
}
