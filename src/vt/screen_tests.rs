//! Byte-level tests of the screen, one group per sequence family.

use super::*;
use crate::cell::Cell;
use crate::{Color, Style};

fn screen(cols: u16, rows: u16, bytes: &[u8]) -> Screen {
    let mut s = Screen::new(cols, rows, 100);
    s.feed(bytes);
    s
}

fn rows(s: &Screen) -> Vec<String> {
    (0..s.rows() as usize).map(|r| s.row_text(r)).collect()
}

fn cur(s: &Screen) -> (u16, u16) {
    let c = s.cursor();
    (c.row, c.col)
}

// ---- printing, C0 ---------------------------------------------------------

#[test]
fn prints_and_moves_with_c0() {
    let s = screen(10, 3, b"ab\r\ncd\x08e\tf");
    assert_eq!(rows(&s), ["ab", "ce      f", ""]);
    assert_eq!(cur(&s), (1, 9));
}

#[test]
fn linefeed_scrolls_into_scrollback() {
    let s = screen(5, 2, b"1\r\n2\r\n3\r\n4");
    assert_eq!(rows(&s), ["3", "4"]);
    assert_eq!(s.scrollback_len(), 2);
    assert_eq!(s.scrollback_row_text(0), "1");
    assert_eq!(s.scrollback_row_text(1), "2");
}

#[test]
fn scrollback_is_bounded() {
    let mut s = Screen::new(5, 2, 3);
    for i in 0..20 {
        s.feed(format!("{i}\r\n").as_bytes());
    }
    assert_eq!(s.scrollback_len(), 3);
    assert_eq!(s.scrollback_row_text(0), "16");
}

#[test]
fn deferred_autowrap() {
    let mut s = screen(5, 3, b"abcde");
    assert_eq!(cur(&s), (0, 4));
    s.feed(b"\r");
    assert_eq!(cur(&s), (0, 0), "CR cancels the pending wrap");
    s.feed(b"\x1b[5Gxy");
    assert_eq!(rows(&s), ["abcdx", "y", ""]);
    // SGR keeps the pending wrap.
    let s = screen(5, 3, b"abcde\x1b[1mf");
    assert_eq!(rows(&s), ["abcde", "f", ""]);
}

#[test]
fn autowrap_off_overwrites_the_last_column() {
    let s = screen(5, 2, b"\x1b[?7labcdefg");
    assert_eq!(rows(&s), ["abcdg", ""]);
}

// ---- cursor movement -------------------------------------------------------

#[test]
fn cursor_movement() {
    let mut s = screen(10, 10, b"\x1b[5;5H");
    assert_eq!(cur(&s), (4, 4));
    s.feed(b"\x1b[2A");
    assert_eq!(cur(&s), (2, 4));
    s.feed(b"\x1b[3B");
    assert_eq!(cur(&s), (5, 4));
    s.feed(b"\x1b[C");
    assert_eq!(cur(&s), (5, 5));
    s.feed(b"\x1b[10D");
    assert_eq!(cur(&s), (5, 0));
    s.feed(b"\x1b[2E");
    assert_eq!(cur(&s), (7, 0));
    s.feed(b"\x1b[3;4H\x1b[F");
    assert_eq!(cur(&s), (1, 0));
    s.feed(b"\x1b[7G");
    assert_eq!(cur(&s), (1, 6));
    s.feed(b"\x1b[9d");
    assert_eq!(cur(&s), (8, 6));
    s.feed(b"\x1b[2`");
    assert_eq!(cur(&s), (8, 1));
    s.feed(b"\x1b[2a\x1b[e");
    assert_eq!(cur(&s), (9, 3));
    s.feed(b"\x1b[99;99f");
    assert_eq!(cur(&s), (9, 9));
    s.feed(b"\x1b[H");
    assert_eq!(cur(&s), (0, 0));
}

// ---- erase -----------------------------------------------------------------

#[test]
fn erase_in_line_and_display() {
    let fill = b"aaaaa\r\nbbbbb\r\nccccc";
    let mut s = screen(5, 3, fill);
    s.feed(b"\x1b[2;3H\x1b[K");
    assert_eq!(rows(&s), ["aaaaa", "bb", "ccccc"]);
    s.feed(b"\x1b[1K");
    assert_eq!(rows(&s), ["aaaaa", "", "ccccc"]);
    let mut s = screen(5, 3, fill);
    s.feed(b"\x1b[2;3H\x1b[J");
    assert_eq!(rows(&s), ["aaaaa", "bb", ""]);
    let mut s = screen(5, 3, fill);
    s.feed(b"\x1b[2;3H\x1b[1J");
    assert_eq!(rows(&s), ["", "   bb", "ccccc"]);
    s.feed(b"\x1b[2J");
    assert_eq!(rows(&s), ["", "", ""]);
    assert_eq!(cur(&s), (1, 2), "ED does not move the cursor");
    let mut s = screen(5, 3, fill);
    s.feed(b"\x1b[2;2H\x1b[2X");
    assert_eq!(rows(&s), ["aaaaa", "b  bb", "ccccc"]);
    s.feed(b"\x1b[?2K");
    assert_eq!(rows(&s), ["aaaaa", "", "ccccc"]);
}

#[test]
fn erase_scrollback_with_ed3() {
    let mut s = screen(5, 2, b"1\r\n2\r\n3\r\n");
    assert!(s.scrollback_len() > 0);
    s.feed(b"\x1b[3J");
    assert_eq!(s.scrollback_len(), 0);
}

#[test]
fn erase_uses_background_colour() {
    let s = screen(4, 1, b"\x1b[44m\x1b[K");
    let runs = s.row_runs(0);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].style.bg, Color::Indexed(4));
    assert_eq!(runs[0].text, "    ");
}

// ---- insert / delete ---------------------------------------------------------

#[test]
fn insert_and_delete_characters() {
    let mut s = screen(6, 1, b"abcdef\x1b[1;3H\x1b[2@");
    assert_eq!(rows(&s), ["ab  cd"]);
    s.feed(b"\x1b[3P");
    assert_eq!(rows(&s), ["abd"]);
    s.feed(b"\x1b[4hXY\x1b[4l");
    assert_eq!(rows(&s), ["abXYd"]);
}

#[test]
fn insert_and_delete_lines() {
    let mut s = screen(3, 4, b"a\r\nb\r\nc\r\nd\x1b[2;2H\x1b[L");
    assert_eq!(rows(&s), ["a", "", "b", "c"]);
    assert_eq!(cur(&s), (1, 0));
    s.feed(b"\x1b[2M");
    assert_eq!(rows(&s), ["a", "c", "", ""]);
    assert_eq!(s.scrollback_len(), 0);
}

#[test]
fn repeat_last_character() {
    let s = screen(10, 1, b"ab\x1b[3b");
    assert_eq!(rows(&s), ["abbbb"]);
}

// ---- scrolling ---------------------------------------------------------------

#[test]
fn scroll_region_and_su_sd() {
    let mut s = screen(3, 5, b"1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r");
    assert_eq!(cur(&s), (0, 0), "DECSTBM homes the cursor");
    s.feed(b"\x1b[4;1H\n");
    assert_eq!(rows(&s), ["1", "3", "4", "", "5"]);
    s.feed(b"\x1b[T");
    assert_eq!(rows(&s), ["1", "", "3", "4", "5"]);
    s.feed(b"\x1b[2S");
    assert_eq!(rows(&s), ["1", "4", "", "", "5"]);
    assert_eq!(s.scrollback_len(), 0, "a partial region keeps no history");
    s.feed(b"\x1b[2;1H\x1bM\x1bM");
    assert_eq!(rows(&s), ["1", "", "", "4", "5"]);
}

#[test]
fn index_and_next_line() {
    let s = screen(5, 3, b"ab\x1bDc\x1bEd");
    assert_eq!(rows(&s), ["ab", "  c", "d"]);
}

#[test]
fn origin_mode() {
    let mut s = screen(5, 5, b"\x1b[2;4r\x1b[?6h\x1b[1;1Hx\x1b[9;1Hy");
    assert_eq!(rows(&s), ["", "x", "", "y", ""]);
    s.feed(b"\x1b[6n");
    assert_eq!(s.take_answers(), b"\x1b[3;2R");
}

// ---- tabs ------------------------------------------------------------------

#[test]
fn tab_stops() {
    let mut s = screen(20, 1, b"\x1b[3g\x1b[4G\x1bH\x1b[1G\tx");
    assert_eq!(rows(&s), ["   x"]);
    s.feed(b"\x1b[1G\x1b[2I");
    assert_eq!(cur(&s), (0, 19));
    s.feed(b"\x1b[Z");
    assert_eq!(cur(&s), (0, 3));
    s.feed(b"\x1b[g\x1b[1G\t");
    assert_eq!(cur(&s), (0, 19));
    let mut s = screen(20, 1, b"\t\t");
    assert_eq!(cur(&s), (0, 16));
    s.feed(b"\x1b[Z");
    assert_eq!(cur(&s), (0, 8));
}

/// `cat` of a tab-separated file whose field ends in the last column: the
/// tab keeps the pending wrap (xterm, alacritty, tmux), so the character
/// there stays and the next field starts the next line.
#[test]
fn a_tab_in_the_last_column_keeps_the_pending_wrap() {
    let s = screen(10, 3, b"abcdefghij\t24");
    assert_eq!(rows(&s), ["abcdefghij", "24", ""]);
    let s = screen(10, 3, b"abcdefghij\x1b[I24");
    assert_eq!(rows(&s), ["abcdefghij", "24", ""], "CHT");
    let s = screen(10, 3, b"abcdefghij\x1b[Z24");
    assert_eq!(rows(&s), ["abcdefghij", "24", ""], "CBT");
    // Without a pending wrap a tab still stops in the last column.
    let s = screen(10, 2, b"abcdefghi\tX");
    assert_eq!(rows(&s), ["abcdefghiX", ""]);
}

#[test]
fn screen_alignment() {
    let s = screen(3, 2, b"\x1b#8");
    assert_eq!(rows(&s), ["EEE", "EEE"]);
}

// ---- SGR ---------------------------------------------------------------------

#[test]
fn sgr_attributes_and_colours() {
    let s = screen(
        20,
        1,
        b"\x1b[1;3;4;31;42ma\x1b[0;38;5;200;48;2;1;2;3mb\x1b[38:2::9:8:7;4:3mc\x1b[94;105;9;7md",
    );
    let r = s.row_runs(0);
    assert_eq!(r.len(), 4);
    assert_eq!(
        r[0].style,
        Style {
            fg: Color::Indexed(1),
            bg: Color::Indexed(2),
            bold: true,
            italic: true,
            underline: 1,
            ..Style::default()
        }
    );
    assert_eq!(r[1].style.fg, Color::Indexed(200));
    assert_eq!(r[1].style.bg, Color::Rgb(1, 2, 3));
    assert_eq!(r[2].style.fg, Color::Rgb(9, 8, 7));
    assert_eq!(r[2].style.underline, 3);
    assert_eq!(r[3].style.fg, Color::Indexed(12));
    assert_eq!(r[3].style.bg, Color::Indexed(13));
    assert!(r[3].style.strike && r[3].style.inverse);
}

#[test]
fn sgr_resets() {
    let s = screen(
        20,
        1,
        b"\x1b[1;2;3;4;5;7;8;9;31;41m\x1b[22;23;24;25;27;28;29;39;49mx\x1b[1m\x1b[my",
    );
    for run in s.row_runs(0) {
        assert_eq!(run.style, Style::default());
    }
}

#[test]
fn render_ansi_reencodes() {
    let s = screen(10, 2, b"\x1b[1;31mred\x1b[0m plain\r\n\x1b[38;2;1;2;3mx");
    assert_eq!(
        s.render_ansi(),
        "\x1b[0;1;31mred\x1b[0m plain\n\x1b[0;38;2;1;2;3mx\x1b[0m"
    );
}

// ---- modes -------------------------------------------------------------------

#[test]
fn dec_private_modes_are_tracked() {
    let mut s = screen(
        10,
        3,
        b"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1004h\x1b[?2026h\x1b[?25l",
    );
    let m = s.modes();
    assert!(m.app_cursor_keys && m.app_keypad && m.bracketed_paste && m.focus_events);
    assert!(m.synchronized_output && !m.cursor_visible && !s.cursor().visible);
    assert_eq!(m.mouse_tracking, MouseTracking::ButtonEvent);
    assert_eq!(m.mouse_encoding, MouseEncoding::Sgr);
    s.feed(b"\x1b[?1l\x1b>\x1b[?2004l\x1b[?1002l\x1b[?1006l\x1b[?1004l\x1b[?2026l\x1b[?25h");
    assert_eq!(
        s.modes(),
        Modes {
            cursor_visible: true,
            ..Modes::default()
        }
    );
    s.feed(b"\x1b[?9h");
    assert_eq!(s.modes().mouse_tracking, MouseTracking::X10);
    s.feed(b"\x1b[?1000;1015h");
    assert_eq!(s.modes().mouse_tracking, MouseTracking::Normal);
    assert_eq!(s.modes().mouse_encoding, MouseEncoding::Urxvt);
    s.feed(b"\x1b[?1003;1005h");
    assert_eq!(s.modes().mouse_tracking, MouseTracking::AnyEvent);
    assert_eq!(s.modes().mouse_encoding, MouseEncoding::Utf8);
    s.feed(b"\x1b[?1006h\x1b[?1005l");
    assert_eq!(
        s.modes().mouse_encoding,
        MouseEncoding::Sgr,
        "resetting another encoding"
    );
    // SGR-Pixels, as programs ask for it (after 1006), reported by DECRQM;
    // resetting it leaves the default encoding, as in xterm.
    s.feed(b"\x1b[?1006;1016h\x1b[?1016$p\x1b[?1006$p");
    assert_eq!(s.modes().mouse_encoding, MouseEncoding::SgrPixels);
    assert_eq!(s.take_answers(), b"\x1b[?1016;1$y\x1b[?1006;2$y");
    s.feed(b"\x1b[?1016l");
    assert_eq!(s.modes().mouse_encoding, MouseEncoding::Default);
    s.feed(b"\x1b[?1006h");
    s.feed(b"\x1b[?1000l");
    assert_eq!(
        s.modes().mouse_tracking,
        MouseTracking::Off,
        "any reset stops tracking"
    );
}

#[test]
fn alternate_screen_1049() {
    let mut s = screen(10, 3, b"prompt$ \x1b[?1049h");
    assert!(s.is_alt_screen() && s.modes().alt_screen);
    assert_eq!(rows(&s), ["", "", ""]);
    s.feed(b"\x1b[2;2Hvim");
    s.feed(b"\x1b[?1049l");
    assert!(!s.is_alt_screen());
    assert_eq!(rows(&s), ["prompt$", "", ""]);
    assert_eq!(cur(&s), (0, 8), "1049 restores the cursor");
}

/// alacritty's `saved_cursor_alt`: a DECSC just after entering the
/// alternate screen saves the pending wrap with the cursor, and after DECRC
/// the next character wraps rather than overwriting the last column.
#[test]
fn entering_the_alternate_screen_keeps_the_pending_wrap() {
    let s = screen(5, 3, b"abcde\x1b[?1049h\x1b7\x1b8XY");
    assert_eq!(rows(&s), ["", "XY", ""]);
    let s = screen(5, 3, b"abcde\x1b[?47hXY");
    assert_eq!(rows(&s), ["", "XY", ""]);
}

#[test]
fn alternate_screen_47_and_1047() {
    let mut s = screen(10, 2, b"main\x1b[?47halt");
    assert_eq!(rows(&s), ["    alt", ""]);
    s.feed(b"\x1b[?47l");
    assert_eq!(rows(&s), ["main", ""]);
    s.feed(b"\x1b[?47h");
    assert_eq!(rows(&s), ["    alt", ""], "47 does not clear");
    s.feed(b"\x1b[?47l\x1b[?1047hx\x1b[?1047l\x1b[?47h");
    assert_eq!(rows(&s), ["", ""], "leaving 1047 clears it");
}

#[test]
fn deccolm_clears_and_homes_without_resizing() {
    let s = screen(10, 3, b"abc\r\ndef\x1b[2;5r\x1b[?3h");
    assert_eq!(rows(&s), ["", "", ""]);
    assert_eq!(cur(&s), (0, 0));
    assert_eq!((s.cols(), s.rows()), (10, 3));
}

#[test]
fn alt_screen_does_not_feed_scrollback() {
    let s = screen(5, 2, b"\x1b[?1049h1\r\n2\r\n3\r\n4");
    assert_eq!(s.scrollback_len(), 0);
}

#[test]
fn save_and_restore_cursor_with_attributes_and_charset() {
    let s = screen(
        10,
        2,
        b"\x1b[2;3H\x1b[1m\x1b(0\x1b7\x1b[H\x1b[0m\x1b(Bq\x1b8q",
    );
    assert_eq!(rows(&s), ["q", "  ─"]);
    assert!(s.row_runs(1)[1].style.bold);
}

#[test]
fn dec_special_graphics_with_shift_out() {
    let s = screen(10, 1, b"\x1b)0a\x0elqk\x0fq");
    assert_eq!(rows(&s), ["a┌─┐q"]);
}

/// `_` in DEC special graphics is a blank (xterm shows a space): text read
/// off the screen must not carry a no-break space where a blank shows.
#[test]
fn dec_special_graphics_underscore_is_a_space() {
    let s = screen(10, 1, b"\x1b(0x_x\x1b(B");
    assert_eq!(rows(&s), ["\u{2502} \u{2502}"]);
}

#[test]
fn soft_and_full_reset() {
    let mut s = screen(10, 2, b"x\x1b[?25l\x1b[4h\x1b[1m\x1b[!p");
    assert!(s.cursor().visible);
    s.feed(b"y");
    assert_eq!(s.row_runs(0)[0].style, Style::default());
    assert_eq!(rows(&s), ["xy", ""]);
    s.feed(b"\x1b]2;t\x07\x1b[?1hzz\x1bc");
    assert_eq!(rows(&s), ["", ""]);
    assert_eq!(cur(&s), (0, 0));
    assert!(!s.modes().app_cursor_keys);
}

// ---- OSC ---------------------------------------------------------------------

#[test]
fn titles() {
    let mut s = screen(10, 1, b"\x1b]0;both\x07");
    assert_eq!(s.title(), "both");
    assert_eq!(s.icon_title(), "both");
    s.feed(b"\x1b]2;win;dow\x1b\\\x1b]1;icon\x07");
    assert_eq!(s.title(), "win;dow");
    assert_eq!(s.icon_title(), "icon");
    s.feed(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\");
    assert_eq!(s.row_text(0), "link");
    // The title stack (XTWINOPS 22/23), as vim's `set title` uses it: a
    // push keeps both, a pop brings back what it is asked for.
    s.feed(b"\x1b]2;base\x07\x1b[22;0t\x1b]0;vim\x07");
    assert_eq!((s.title(), s.icon_title()), ("vim", "vim"));
    s.feed(b"\x1b[23;2t");
    assert_eq!((s.title(), s.icon_title()), ("base", "vim"));
    s.feed(b"\x1b[22t\x1b]0;x\x07\x1b[23t");
    assert_eq!((s.title(), s.icon_title()), ("base", "vim"));
    // Popping an empty stack changes nothing; the stack is bounded.
    s.feed(b"\x1b[23;0t");
    assert_eq!(s.title(), "base");
    for _ in 0..100 {
        s.feed(b"\x1b[22;0t");
    }
    s.check_invariants().unwrap();
}

// ---- answers -------------------------------------------------------------------

#[test]
fn answers() {
    let mut s = screen(10, 5, b"\x1b[3;4H\x1b[6n\x1b[5n\x1b[?6n");
    assert_eq!(s.take_answers(), b"\x1b[3;4R\x1b[0n\x1b[?3;4;1R");
    assert!(s.take_answers().is_empty());
    s.feed(b"\x1b[c\x1b[>c\x1b[>0q");
    let a = String::from_utf8(s.take_answers()).unwrap_or_default();
    assert!(
        a.starts_with("\x1b[?62;22c\x1b[>1;10;0c\x1bP>|ptybroker("),
        "{a:?}"
    );
    s.feed(b"\x1b]11;?\x07\x1b]10;?\x1b\\");
    assert_eq!(
        s.take_answers(),
        b"\x1b]11;rgb:0000/0000/0000\x07\x1b]10;rgb:e5e5/e5e5/e5e5\x1b\\"
    );
    s.feed(b"\x1b[?2004h\x1b[?2004$p\x1b[?1$p\x1b[?31337$p\x1b[4$p");
    assert_eq!(
        s.take_answers(),
        b"\x1b[?2004;1$y\x1b[?1;2$y\x1b[?31337;0$y\x1b[4;2$y"
    );
    s.feed(b"\x1b[18t\x1b]4;1;?\x07");
    assert_eq!(
        s.take_answers(),
        b"\x1b[8;5;10t\x1b]4;1;rgb:cdcd/0000/0000\x07"
    );
}

#[test]
fn pixel_sizes_and_settings_are_reported() {
    let mut s = screen(12, 5, b"\x1b[14t\x1b[16t");
    assert_eq!(s.take_answers(), b"\x1b[4;100;120t\x1b[6;20;10t");
    // DECRQSS: the pen, the scroll region, the cursor shape, the
    // conformance level; anything else is answered as unknown.
    s.feed(b"\x1b[1;4:3;38;5;200;42m\x1b[2;4r\x1b[5 q");
    s.feed(b"\x1bP$qm\x1b\\\x1bP$qr\x1b\\\x1bP$q q\x1b\\\x1bP$q\"p\x1b\\");
    assert_eq!(
        String::from_utf8(s.take_answers()).unwrap_or_default(),
        "\x1bP1$r0;1;4:3;38;5;200;42m\x1b\\\x1bP1$r2;4r\x1b\\\x1bP1$r5 q\x1b\\\x1bP1$r62;1\"p\x1b\\"
    );
    s.feed(b"\x1bP$qx\x1b\\\x1bP$qmmmmmmmm\x1b\\");
    assert_eq!(s.take_answers(), b"\x1bP0$r\x1b\\\x1bP0$r\x1b\\");
    // A request cancelled by CAN, or another device control string, gets
    // no answer.
    s.feed(b"\x1bP$qm\x18\x1bP+q544e\x1b\\\x1bPq#0\x1b\\");
    assert!(s.take_answers().is_empty());
    // SGR 0 reads back as the plain reset.
    s.feed(b"\x1b[m\x1b[0 q\x1bP$qm\x1b\\\x1bP$q q\x1b\\");
    assert_eq!(s.take_answers(), b"\x1bP1$r0m\x1b\\\x1bP1$r1 q\x1b\\");
}

#[test]
fn unsupported_queries_are_not_answered() {
    let mut s = screen(
        10,
        5,
        b"\x1b[?u\x1b[=c\x1bP+q544e\x1b\\\x1b[15t\x1b]52;c;?\x07",
    );
    assert!(s.take_answers().is_empty());
}

// ---- unicode -------------------------------------------------------------------

#[test]
fn wide_characters() {
    let s = screen(6, 2, "中文ab".as_bytes());
    assert_eq!(rows(&s), ["中文ab", ""]);
    assert_eq!(cur(&s), (0, 5));
    // A wide character never straddles the margin.
    let s = screen(5, 2, "abcd中".as_bytes());
    assert_eq!(rows(&s), ["abcd", "中"]);
    assert_eq!(cur(&s), (1, 2));
}

#[test]
fn overwriting_half_a_wide_character_blanks_the_other() {
    let s = screen(6, 1, "中文\x1b[1;2Hx".as_bytes());
    assert_eq!(rows(&s), [" x文"]);
    let s = screen(6, 1, "中文\x1b[1;3Hx".as_bytes());
    assert_eq!(rows(&s), ["中x"]);
    let s = screen(6, 1, "中文\x1b[1;2H\x1b[K".as_bytes());
    assert_eq!(rows(&s), [""]);
}

/// The same through the batch path for non-ASCII text, which tests the
/// old cells only before the row's extent: a wide character's halves there
/// are still found, whichever half the new text starts on.
#[test]
fn non_ascii_text_over_half_a_wide_character_blanks_the_other() {
    for (bytes, want) in [
        ("中文\x1b[1;2Hé", " é文"),
        ("中文\x1b[1;3Hé", "中é"),
        ("中文\x1b[1;2H日", " 日"),
        ("中文\x1b[1;3Hé日", "中é日"),
        ("中文ab\x1b[1;4Hé", "中 éab"),
    ] {
        let s = screen(8, 1, bytes.as_bytes());
        assert_eq!(rows(&s), [want], "{bytes:?}");
        s.check_invariants().expect(bytes);
    }
}

#[test]
fn combining_marks_join_the_previous_cell() {
    let s = screen(6, 1, "e\u{301}x".as_bytes());
    assert_eq!(s.row_text(0), "e\u{301}x");
    assert_eq!(cur(&s), (0, 2));
    let s = screen(6, 1, "中\u{302}".as_bytes());
    assert_eq!(s.row_text(0), "中\u{302}");
    let s = screen(6, 1, "❤\u{fe0f}".as_bytes());
    assert_eq!(s.row_text(0), "❤\u{fe0f}");
}

/// A mark written after the cursor moved on over blanks joins the blank
/// before the cursor, on the screen and in history alike.
#[test]
fn a_mark_on_a_blank_goes_into_history_as_shown() {
    let mut s = Screen::new(10, 2, 10);
    s.feed("\x1b[5C\u{301}\r\n\n".as_bytes());
    assert_eq!(s.scrollback_len(), 1);
    assert_eq!(s.scrollback_row_text(0), "     \u{301}");
    s.check_invariants().unwrap();
}

#[test]
fn emoji_are_wide() {
    let s = screen(6, 1, "😀x".as_bytes());
    assert_eq!(cur(&s), (0, 3));
    assert_eq!(s.row_text(0), "😀x");
}

#[test]
fn invalid_utf8_shows_replacement() {
    let s = screen(6, 1, b"a\xffb\xc3");
    assert_eq!(s.row_text(0), "a\u{fffd}b");
    assert!(s.is_mid_sequence());
}

// ---- split feeds -------------------------------------------------------------

#[test]
fn feeds_split_anywhere() {
    let input = "x\x1b[1;31mé中\x1b]0;title\x07😀\x1b[?1049h\x1b[2;3Hz\x1b[6n".as_bytes();
    let whole = screen(10, 3, input);
    for cut in 0..input.len() {
        let mut s = Screen::new(10, 3, 100);
        s.feed(&input[..cut]);
        s.feed(&input[cut..]);
        assert_eq!(rows(&s), rows(&whole), "cut at {cut}");
        assert_eq!(s.title(), "title");
        assert_eq!(s.render_ansi(), whole.render_ansi());
    }
}

// ---- memory --------------------------------------------------------------------

#[test]
fn full_scrollback_of_80_column_text_fits_the_budget() {
    let mut s = Screen::new(80, 24, 10_000);
    let line: String = (0..80).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    for i in 0..10_100 {
        let colour = if i % 3 == 0 { "\x1b[32m" } else { "" };
        s.feed(format!("{colour}{line}\x1b[0m\r\n").as_bytes());
    }
    assert_eq!(s.scrollback_len(), 10_000);
    let bytes = s.heap_bytes();
    // History lines live end to end in a few rings, not an allocation
    // each; allow 16 bytes of allocator overhead per row of the two grids.
    let with_overhead = bytes + 2 * 24 * 2 * 16;
    eprintln!("heap estimate: {bytes} bytes, with allocator overhead {with_overhead}");
    assert!(with_overhead < 4 << 20, "{with_overhead} bytes");
}

// ---- resize ----------------------------------------------------------------------

#[test]
fn resize_reflows_wrapped_lines() {
    let mut s = screen(10, 4, b"$ abcdefghijklmno\r\nnext");
    assert_eq!(rows(&s), ["$ abcdefgh", "ijklmno", "next", ""]);
    s.resize(20, 4);
    assert_eq!(rows(&s), ["$ abcdefghijklmno", "next", "", ""]);
    assert_eq!(cur(&s), (1, 4));
    s.resize(5, 4);
    assert_eq!(rows(&s), ["defgh", "ijklm", "no", "next"]);
    assert_eq!(s.scrollback_len(), 1);
    assert_eq!(s.scrollback_row_text(0), "$ abc");
    assert_eq!(cur(&s), (3, 4));
    s.resize(10, 4);
    assert_eq!(rows(&s), ["$ abcdefgh", "ijklmno", "next", ""]);
    assert_eq!(s.scrollback_len(), 0);
}

#[test]
fn resize_keeps_wide_characters_whole() {
    let mut s = screen(6, 3, "ab中文字".as_bytes());
    assert_eq!(rows(&s), ["ab中文", "字", ""]);
    s.resize(5, 3);
    assert_eq!(rows(&s), ["ab中", "文字", ""]);
    // The column 中 left free is a pad, not a space: widening joins the
    // line as it was printed.
    s.resize(6, 3);
    assert_eq!(rows(&s), ["ab中文", "字", ""]);
    s.resize(20, 3);
    assert_eq!(rows(&s), ["ab中文字", "", ""]);
}

/// A wide character that does not fit the last column wraps and leaves a
/// pad there, which reflow drops, in the history as on the screen; a
/// space the program printed there stays.
#[test]
fn a_wide_characters_pad_is_not_text_when_lines_reflow() {
    let word = "日本語テキスト";
    let text = format!("{word}{word}\r\n");
    let mut s = screen(11, 8, text.as_bytes());
    assert_eq!(rows(&s)[..3], ["日本語テキ", "スト日本語", "テキスト"]);
    s.resize(40, 8);
    assert_eq!(rows(&s)[0], format!("{word}{word}"));
    for cols in [25, 11, 9, 40] {
        s.resize(cols, 8);
    }
    assert_eq!(rows(&s)[0], format!("{word}{word}"));
    // Through the history: printed at 11 columns on 2 rows, most of the
    // line scrolls off; widening brings it back whole.
    let mut s = screen(11, 2, format!("{word}{word}{word}\r\n$ ").as_bytes());
    assert!(s.scrollback_len() >= 3);
    s.resize(50, 2);
    assert_eq!(s.scrollback_len(), 0);
    assert_eq!(rows(&s), [format!("{word}{word}{word}").as_str(), "$"]);
    // Lines pulled back from the history onto a taller screen keep their
    // pads too.
    let mut s = screen(11, 2, format!("{word}{word}\r\n$ ").as_bytes());
    s.resize(11, 6);
    s.resize(40, 6);
    assert_eq!(rows(&s)[..2], [format!("{word}{word}").as_str(), "$"]);
    // A space printed in the last column is text.
    let mut s = screen(11, 4, "abcdefghij 日本\r\n".as_bytes());
    assert_eq!(rows(&s)[..2], ["abcdefghij", "日本"]);
    s.resize(40, 4);
    assert_eq!(rows(&s)[0], "abcdefghij 日本");
    // A pad that DCH moved into the row is only a blank: it keeps its
    // column through any number of reflows.
    let mut s = screen(11, 4, format!("{word}\r\n").as_bytes());
    s.feed(b"\x1b[H\x1b[2P");
    s.resize(40, 4);
    assert_eq!(rows(&s)[0], "本語テキ   スト");
    s.resize(9, 4);
    s.resize(40, 4);
    assert_eq!(rows(&s)[0], "本語テキ   スト");
    // So is a character already there that the wrap left alone.
    let mut s = screen(11, 4, "abcdefghijk\r\x1b[10C日本\r\n".as_bytes());
    assert_eq!(rows(&s)[..2], ["abcdefghijk", "日本"]);
    s.resize(40, 4);
    assert_eq!(rows(&s)[0], "abcdefghijk日本");
}

#[test]
fn resize_rows_moves_lines_through_history() {
    let mut s = screen(10, 4, b"1\r\n2\r\n3\r\n4");
    s.resize(10, 2);
    assert_eq!(rows(&s), ["3", "4"]);
    assert_eq!(s.scrollback_len(), 2);
    assert_eq!(cur(&s), (1, 1));
    s.resize(10, 5);
    assert_eq!(rows(&s), ["1", "2", "3", "4", ""]);
    assert_eq!(s.scrollback_len(), 0);
    assert_eq!(cur(&s), (3, 1));
}

#[test]
fn shrinking_drops_blank_rows_below_the_cursor_first() {
    let mut s = screen(10, 5, b"a\r\nb");
    s.resize(10, 2);
    assert_eq!(rows(&s), ["a", "b"]);
    assert_eq!(s.scrollback_len(), 0);
}

#[test]
fn resize_in_alt_screen_keeps_primary_consistent() {
    let mut s = screen(10, 3, b"$ 0123456789ab\x1b[?1049h\x1b[2;2Hx");
    s.resize(20, 4);
    assert_eq!(rows(&s), ["", " x", "", ""]);
    s.feed(b"\x1b[?1049l");
    assert_eq!(rows(&s), ["$ 0123456789ab", "", "", ""]);
    assert_eq!(cur(&s), (0, 14));
    s.resize(3, 2);
    assert_eq!(cur(&s), (1, 2));
}

#[test]
fn resize_clamps_cursor_and_margins() {
    let mut s = screen(10, 10, b"\x1b[2;8r\x1b[10;10H");
    s.resize(5, 5);
    let c = s.cursor();
    assert!(c.row < 5 && c.col < 5);
    s.feed(b"\x1b[5;1H\n\n");
    assert_eq!(cur(&s), (4, 0));
}

// ---- rows without cells (issue 8) ----------------------------------------------

/// Which visible rows hold no cells.
fn lazy(s: &Screen) -> Vec<bool> {
    s.term.grid.iter().map(|r| r.is_lazy()).collect()
}

/// A blank screen whose every row holds cells (written, then erased).
fn materialised(cols: u16, rows: u16) -> Screen {
    let mut s = Screen::new(cols, rows, 100);
    for r in 1..=rows {
        s.feed(format!("\x1b[{r};1H{}", "x".repeat(usize::from(cols))).as_bytes());
    }
    s.feed(b"\x1b[H\x1b[2J");
    assert!(lazy(&s).iter().all(|&l| !l));
    s
}

/// Both screens read the same in every format a caller can ask for.
fn same_everywhere(a: &Screen, b: &Screen, what: &str) {
    assert_eq!(a.text(), b.text(), "{what}: text");
    assert_eq!(a.render_ansi(), b.render_ansi(), "{what}: ansi");
    for r in 0..usize::from(a.rows()) {
        assert_eq!(a.row_runs(r), b.row_runs(r), "{what}: runs of row {r}");
    }
    assert_eq!(a.scrollback_len(), b.scrollback_len(), "{what}: history");
    for i in 0..a.scrollback_len() {
        assert_eq!(
            a.scrollback_row_runs(i),
            b.scrollback_row_runs(i),
            "{what}: history {i}"
        );
    }
    assert_eq!(a.cursor(), b.cursor(), "{what}: cursor");
    // ptybroker's frame_json and svg read only the views above (its
    // frame.rs tests compare them over the same kinds of screens).
    a.check_invariants()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    b.check_invariants()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn never_written_rows_hold_no_cells_and_read_as_blanks() {
    let fresh = Screen::new(12, 4, 100);
    assert_eq!(lazy(&fresh), [true; 4]);
    same_everywhere(&fresh, &materialised(12, 4), "fresh");
    assert_eq!(rows(&fresh), ["", "", "", ""]);
}

/// The same bytes on a screen of rows without cells and on one whose rows
/// hold blank cells give the same screen.
fn same_from_either_start(cols: u16, rows: u16, bytes: &[u8]) -> Screen {
    let mut fresh = Screen::new(cols, rows, 100);
    let mut full = materialised(cols, rows);
    fresh.feed(bytes);
    full.feed(bytes);
    same_everywhere(&fresh, &full, &String::from_utf8_lossy(bytes));
    fresh
}

#[test]
fn background_colour_erase_of_rows_without_cells_colours_them() {
    let blue = Style {
        bg: Color::Indexed(4),
        ..Style::default()
    };
    // EL 0, ECH, EL 1, ICH and DCH, each on a row never written.
    let s = same_from_either_start(
        6,
        6,
        b"\x1b[44m\x1b[2;3H\x1b[K\x1b[3;2H\x1b[2X\x1b[4;1H\x1b[1K\x1b[5;5H\x1b[@\x1b[6;6H\x1b[P",
    );
    assert_eq!(lazy(&s), [true, false, false, false, false, false]);
    let runs = s.row_runs(1);
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0].text.as_str(), runs[0].style),
        ("  ", Style::default())
    );
    assert_eq!((runs[1].text.as_str(), runs[1].style), ("    ", blue));
    assert_eq!(s.row_runs(3)[0].style, blue);
    // ED 2 and EL 2 with a background colour every row.
    let s = same_from_either_start(6, 3, b"\x1b[41m\x1b[2J\x1b[0m\x1b[3;1H\x1b[42m\x1b[2K");
    assert_eq!(lazy(&s), [false; 3]);
    for r in 0..3 {
        assert_eq!(s.row_runs(r)[0].text, "      ", "row {r}");
    }
    // Erasing with the default background leaves them without cells.
    let s = same_from_either_start(
        6,
        3,
        b"\x1b[31m\x1b[2;3H\x1b[K\x1b[X\x1b[1K\x1b[@\x1b[P\x1b[J",
    );
    assert_eq!(lazy(&s), [true; 3]);
}

#[test]
fn cursor_movement_then_a_write_fills_the_row_before_it() {
    let s = same_from_either_start(10, 4, b"\x1b[3;7Hx\x1b[2;4H\xcc\x81\x1b[4;9H\xe4\xb8\xad");
    assert_eq!(rows(&s), ["", "   \u{301}", "      x", "        中"]);
    assert_eq!(lazy(&s), [true, false, false, false]);
    // Scrolling, inserting and deleting lines around rows without cells.
    same_from_either_start(
        8,
        5,
        b"\x1b[2;1Ha\x1b[5;1H\n\nb\x1b[2;4r\x1b[3;1H\x1b[L\x1bM\x1b[2M\x1b[S\x1b[T\x1b[r",
    );
    same_from_either_start(8, 5, b"\x1b[?1049h\x1b[3;3Hz\x1b[?1049l\x1b[4;1Hy");
}

#[test]
fn resize_and_reflow_keep_rows_without_cells_blank() {
    // A wrapped line, a row never written between lines, history.
    let bytes = b"0\r\n1\r\n2\r\n$ abcdefghijklm\r\n\r\nnext\x1b[5;3H";
    for (cols, rows) in [(5, 6), (20, 6), (13, 3), (13, 9), (1, 2), (40, 12)] {
        let mut fresh = Screen::new(13, 6, 100);
        let mut full = materialised(13, 6);
        fresh.feed(bytes);
        full.feed(bytes);
        fresh.resize(cols, rows);
        full.resize(cols, rows);
        same_everywhere(&fresh, &full, &format!("{cols}x{rows}"));
        fresh.feed(b"\x1b[Hw");
        full.feed(b"\x1b[Hw");
        same_everywhere(&fresh, &full, &format!("{cols}x{rows}, written"));
    }
    // Rows a resize adds, and rows that were blank, hold no cells.
    let mut s = screen(10, 3, b"a\r\n\r\nb");
    assert_eq!(lazy(&s), [false, true, false]);
    s.resize(20, 5);
    assert_eq!(lazy(&s), [false, true, false, true, true]);
    s.resize(20, 8);
    assert_eq!(lazy(&s)[3..], [true; 5]);
}

#[test]
fn erasing_releases_cells_without_thrashing() {
    // Blank lines scrolling in allocate nothing.
    let s = screen(80, 24, &[b'\n'; 200]);
    assert_eq!(lazy(&s), [true; 24]);
    assert_eq!(s.scrollback_len(), 100);
    // A program redrawing every row keeps its rows' cells from frame to
    // frame: no free and malloc per row per frame.
    let frame = |n: usize| -> Vec<u8> {
        let mut f = b"\x1b[H\x1b[2J".to_vec();
        for r in 1..=24 {
            f.extend_from_slice(format!("\x1b[{r};1Hframe {n} row {r}\x1b[K").as_bytes());
        }
        f
    };
    let mut s = Screen::new(80, 24, 100);
    s.feed(&frame(0));
    let cells: Vec<*const Cell> = s.term.grid.iter().map(|r| r.cells.as_ptr()).collect();
    // (Each row's kept text grows once to the longest it held: frames
    // 10 on are a character longer.)
    s.feed(&frame(10));
    let heap = s.heap_bytes();
    for n in 11..30 {
        s.feed(&frame(n));
    }
    assert_eq!(s.heap_bytes(), heap);
    let now: Vec<*const Cell> = s.term.grid.iter().map(|r| r.cells.as_ptr()).collect();
    assert_eq!(cells, now, "rows kept their cells");
    // A row left blank gives its cells back the second time it is erased.
    s.feed(b"\x1b[2J");
    assert_eq!(lazy(&s), [false; 24]);
    s.feed(b"\x1b[1;1Hprompt\x1b[2J");
    assert!(!lazy(&s)[0], "written since the last erase");
    assert_eq!(lazy(&s)[1..], [true; 23]);
    // What is left: the rows themselves, the prompt row's cells and kept
    // text, the tab stops.
    let floor = 24 * std::mem::size_of::<crate::grid::Row>()
        + 80 * std::mem::size_of::<Cell>()
        + s.term.grid[0].text_capacity()
        + s.term.tabs.capacity();
    assert_eq!(s.heap_bytes(), floor, "of {heap} while drawing");
}

#[test]
fn blank_history_lines_pulled_back_by_a_resize_are_plain_rows() {
    // Growing the screen brings blank lines back from history; they come
    // back as rows without cells, which must be marked plain.
    let mut s = Screen::new(10, 3, 100);
    s.feed(b"\n\n\n\n\n");
    s.resize(10, 6);
    s.check_invariants().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows(&s), ["", "", "", "", "", ""]);
}

#[test]
fn rewinds_count_repaints_not_new_output() {
    // Lines, carriage returns, backspaces and moves along a row add output.
    let mut s = screen(20, 5, b"one\r\ntwo\r\n3.. \x082.. \r\x1b[5Cx\x1b[K");
    assert_eq!(s.rewinds(), 0);
    // Going back up (CUU, CUP above the cursor, RI) or clearing repaints.
    s.feed(b"\x1b[A");
    assert_eq!(s.rewinds(), 1);
    s.feed(b"\x1b[H");
    assert_eq!(s.rewinds(), 2);
    s.feed(b"\x1b[4;1H\x1b[2;1H");
    assert_eq!(s.rewinds(), 3);
    s.feed(b"\x1bM\x1b[2J");
    assert_eq!(s.rewinds(), 5);
    // Moving down or to the same row does not.
    s.feed(b"\x1b[3;1H\x1b[3;9H\x1b[B");
    assert_eq!(s.rewinds(), 5);
}

#[test]
fn history_total_numbers_lines_for_good() {
    let mut s = screen(10, 4, b"");
    for i in 0..10 {
        s.feed(format!("{i}\r\n").as_bytes());
    }
    // Ten line feeds on a 4-row screen: lines 0..=6 scrolled off.
    assert_eq!(s.history_total(), 7);
    assert_eq!(s.scrollback_row_text(0), "0");
    // Clearing the history (ED 3) does not renumber what comes next.
    s.feed(b"\x1b[3J");
    assert_eq!((s.history_total(), s.scrollback_len()), (7, 0));
    s.feed(b"x\r\n");
    assert_eq!((s.history_total(), s.scrollback_len()), (8, 1));
    assert_eq!(s.scrollback_row_text(0), "7");
}

/// Text fed whole (the fast path decodes and stores runs of characters in
/// one pass) reads the same, everywhere, as the same bytes fed one at a
/// time (every character through the general path): wide characters at
/// the margin, combining marks at the start of a row, after a wide
/// character and in floods, zero-width characters in column 0, C1 controls
/// written as UTF-8, text over half a wide character, styles, insert mode
/// and scrolling into history, in a pseudo-random mix.
#[test]
fn text_fed_whole_reads_as_fed_a_byte_at_a_time() {
    let pieces: &[&str] = &[
        "日本語",
        "한국어",
        "😀",
        "👍🏽",
        "e\u{301}",
        "\u{301}",
        "\u{308}\u{308}",
        "🇫🇷",
        "ｆｕｌｌ",
        " ",
        "  ",
        "ab",
        "x",
        "\r",
        "\n",
        "\r\n",
        "\t",
        "\u{85}",
        "\u{200b}",
        "é",
        "\u{7ff}",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[44m",
        "\x1b[1;38;2;1;2;3m",
        "\x1b[m",
        "a \x1b[31m ",
        "\x1b[4h",
        "\x1b[4l",
        "\x1b[3D",
        "\x1b[2;5H",
        "\x1b[K",
        "\x1b[2@",
        "\x1b[P",
        "\x1b[?7l",
        "\x1b[?7h",
        "\u{fe0f}",
        "中\u{302}",
    ];
    let marks = "a".to_string() + &"\u{301}".repeat(20);
    let mut seed = 0x2545_f491_u32;
    for round in 0..300 {
        let mut input = String::new();
        let (cols, rows) = (5 + round % 7, 3);
        // Fed a piece at a time too, every row's invariants checked after
        // each (its kept text against the encoder's, among them).
        let mut pieced = Screen::new(cols, rows, 100);
        for _ in 0..60 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let i = seed as usize % (pieces.len() + 1);
            let piece = pieces.get(i).copied().unwrap_or(&marks);
            input.push_str(piece);
            pieced.feed(piece.as_bytes());
            pieced
                .check_invariants()
                .unwrap_or_else(|e| panic!("round {round} after {input:?}: {e}"));
        }
        let whole = screen(cols, rows, input.as_bytes());
        same_everywhere(
            &whole,
            &pieced,
            &format!("round {round} in pieces: {input:?}"),
        );
        let mut bytewise = Screen::new(cols, rows, 100);
        for b in input.as_bytes() {
            bytewise.feed(std::slice::from_ref(b));
        }
        same_everywhere(&whole, &bytewise, &format!("round {round}: {input:?}"));
    }
}

#[test]
fn blanks_before_the_cursor_count_a_prompts_space() {
    let at = |bytes: &[u8]| screen(10, 2, bytes).blanks_before_cursor();
    assert_eq!(at(b">>> "), 1);
    // Coloured, as python 3.13 draws its prompt: trimmed from the text too.
    assert_eq!(at(b"\x1b[1;35m>>> \x1b[0m"), 1);
    // Ending at the right edge: the wrap pending puts the cursor past it.
    assert_eq!(at(b"abcdefgh$ "), 1);
    assert_eq!(at(b"abc"), 0);
    assert_eq!(at(b"ab  \x1b[2D"), 0);
    assert_eq!(at(b"\xe4\xb8\xad  "), 2);
}

#[test]
fn a_styled_line_goes_into_history_with_its_runs() {
    // The trailing default blanks are trimmed; the red blank before them
    // is not.
    let mut s = Screen::new(12, 2, 100);
    s.feed(b"a \x1b[31m \x1b[0m  \r\n\x1b[1;32mok\x1b[0m\tx\x1b[44m \x1b[0m\r\n\r\n");
    s.check_invariants().unwrap();
    assert_eq!(s.scrollback_len(), 2);
    let text = |i| -> Vec<(String, Style)> {
        s.scrollback_row_runs(i)
            .into_iter()
            .map(|r| (r.text, r.style))
            .collect()
    };
    let red = Style {
        fg: Color::Indexed(1),
        ..Style::default()
    };
    assert_eq!(
        text(0),
        [("a ".to_string(), Style::default()), (" ".to_string(), red)]
    );
    let line = text(1);
    let words: Vec<&str> = line.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(words, ["ok", "      x", " "]);
    assert!(line[0].1.bold && line[2].1.bg == Color::Indexed(4));
    // Fed a byte at a time (through the one-character path) it reads the
    // same.
    let mut bytes = Screen::new(12, 2, 100);
    for &b in b"a \x1b[31m \x1b[0m  \r\n\x1b[1;32mok\x1b[0m\tx\x1b[44m \x1b[0m\r\n\r\n" {
        bytes.feed(&[b]);
    }
    same_everywhere(&bytes, &s, "styled");
}
