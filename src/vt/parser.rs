//! A DEC/ANSI escape-sequence parser after Paul Williams' state diagram
//! (<https://vt100.net/emu/dec_ansi_parser>), with UTF-8 decoding in the
//! ground state.
//!
//! The parser knows nothing of screens: it turns bytes into calls on a
//! [`Perform`] implementation, the way `vte` does for alacritty. Every buffer
//! it keeps is bounded (parameters, intermediates, OSC strings), so hostile
//! input costs time in proportion to its length and no more memory.

/// Most parameters a CSI or DCS sequence keeps; later ones are dropped and the
/// sequence is marked as ignored (as xterm and vte do).
pub const MAX_PARAMS: usize = 32;
/// Most intermediate bytes kept; a sequence with more is ignored.
pub const MAX_INTERMEDIATES: usize = 2;
/// Most bytes of one OSC string kept; the rest are dropped.
pub const MAX_OSC: usize = 4096;
/// Most `;`-separated OSC fields handed to `osc_dispatch`.
const MAX_OSC_PARAMS: usize = 16;

/// What the parser calls. Default methods do nothing, so a performer only
/// implements what it cares about.
pub trait Perform {
    /// A printable character (already decoded from UTF-8).
    fn print(&mut self, c: char);
    /// A run of printable characters. The default calls [`Perform::print`]
    /// for each one; a screen overrides it for speed.
    fn print_str(&mut self, s: &str) {
        for c in s.chars() {
            self.print(c);
        }
    }
    /// Text that starts with a non-ASCII byte: `text` is the rest of the
    /// input, which may hold anything further on (ill-formed UTF-8, control
    /// bytes, escape sequences). Print the well-formed characters at its
    /// start, as many as is convenient, stopping before any control byte
    /// or DEL and before anything ill-formed or cut short, and return how
    /// many bytes were printed: at least the first character's, unless it
    /// is ill-formed or cut short (then 0, and the parser prints U+FFFD or
    /// keeps the bytes for the next call). The default prints the first
    /// character through [`Perform::print`]; a screen overrides it to
    /// decode and store a run of characters in one pass.
    fn print_utf8(&mut self, text: &[u8]) -> usize {
        match decode(text) {
            Some((c, len)) => {
                self.print(c);
                len
            }
            None => 0,
        }
    }
    /// A run of printable ASCII (0x20-0x7e). The default calls
    /// [`Perform::print`] for each byte.
    fn print_ascii(&mut self, s: &[u8]) {
        for &b in s {
            self.print(char::from(b));
        }
    }
    /// A C0 control (or DEL is never passed; it is ignored).
    fn execute(&mut self, _byte: u8) {}
    /// A complete CSI sequence. `intermediates` holds private markers
    /// (`?`, `>`, `<`, `=`) as well as intermediates (`$`, ` `, ...).
    fn csi_dispatch(
        &mut self,
        _params: &Params,
        _intermediates: &[u8],
        _ignore: bool,
        _action: u8,
    ) {
    }
    /// A complete ESC sequence.
    fn esc_dispatch(&mut self, _intermediates: &[u8], _ignore: bool, _byte: u8) {}
    /// A complete OSC string split on `;`. `bell_terminated` says whether BEL
    /// (rather than ST) ended it, so an answer can use the same terminator.
    fn osc_dispatch(&mut self, _params: &[&[u8]], _bell_terminated: bool) {}
    /// The start of a DCS string.
    fn hook(&mut self, _params: &Params, _intermediates: &[u8], _ignore: bool, _action: u8) {}
    /// One byte of a DCS string's data.
    fn put(&mut self, _byte: u8) {}
    /// The end of a DCS string. When CAN or SUB cancels the string, the
    /// performer gets that [`Perform::execute`] first, then this (unlike
    /// the state diagram's exit-then-transition order, so that it can tell
    /// a cancelled string from a finished one).
    fn unhook(&mut self) {}
}

/// The numeric parameters of a CSI or DCS sequence, with `:` sub-parameters.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: [u16; MAX_PARAMS],
    /// Bit `i` set: value `i` is a `:` sub-parameter of the one before it.
    sub: u32,
    len: usize,
}

impl Params {
    /// Number of values, counting sub-parameters.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No values at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `i` (0 when absent or empty).
    pub fn get(&self, i: usize) -> u16 {
        if i < self.len {
            self.values[i]
        } else {
            0
        }
    }

    /// Value `i`, with 0 or absent meaning `default` (the CSI convention).
    pub fn get_or(&self, i: usize, default: u16) -> u16 {
        match self.get(i) {
            0 => default,
            v => v,
        }
    }

    /// All values in order, sub-parameters included.
    pub fn values(&self) -> &[u16] {
        &self.values[..self.len]
    }

    /// Whether any value is a `:` sub-parameter.
    pub fn has_subparams(&self) -> bool {
        self.sub != 0
    }

    /// The parameters grouped: each group is a value and its `:` sub-values.
    pub fn groups(&self) -> ParamGroups<'_> {
        ParamGroups {
            params: self,
            pos: 0,
        }
    }

    fn is_sub(&self, i: usize) -> bool {
        i < 32 && self.sub & (1 << i) != 0
    }

    fn clear(&mut self) {
        self.len = 0;
        self.sub = 0;
    }
}

/// Iterator over parameter groups (see [`Params::groups`]).
pub struct ParamGroups<'a> {
    params: &'a Params,
    pos: usize,
}

impl<'a> Iterator for ParamGroups<'a> {
    type Item = &'a [u16];

    fn next(&mut self) -> Option<&'a [u16]> {
        let p = self.params;
        if self.pos >= p.len {
            return None;
        }
        let start = self.pos;
        let mut end = start + 1;
        while end < p.len && p.is_sub(end) {
            end += 1;
        }
        self.pos = end;
        Some(&p.values[start..end])
    }
}

/// Length of the leading run of printable ASCII (0x20-0x7e), eight bytes
/// at a time.
#[inline]
fn ascii_run(bytes: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let v = u64::from_le_bytes(w);
        // A byte below 0x20, equal to 0x7f, or with its high bit set.
        let below = v.wrapping_sub(LO * 0x20) & !v;
        let x = v ^ (LO * 0x7f);
        let del = x.wrapping_sub(LO) & !x;
        if (below | del | v) & HI != 0 {
            break;
        }
        i += 8;
    }
    i + bytes[i..]
        .iter()
        .position(|&b| !(0x20..0x7f).contains(&b))
        .unwrap_or(bytes.len() - i)
}

/// The next four bytes of `bytes` from `i` as a little-endian word (first
/// byte lowest), zero past the end: a character cut short by the end then
/// reads as ill-formed, as no continuation byte is zero.
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], i: usize) -> u32 {
    match bytes.get(i..i + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => {
            let mut w = [0u8; 4];
            let tail = bytes.get(i..).unwrap_or_default();
            w[..tail.len().min(4)].copy_from_slice(&tail[..tail.len().min(4)]);
            u32::from_le_bytes(w)
        }
    }
}

/// The well-formed UTF-8 character at the start of `word` (see
/// [`word_at`]) whose first byte is not ASCII: its code point and length;
/// None if it is ill-formed or cut short. Three-byte characters (most of
/// CJK, kana, hangul and fullwidth forms) are tested first.
#[inline(always)]
pub(crate) fn decode_word(word: u32) -> Option<(u32, usize)> {
    let b0 = word & 0xff;
    if word & 0x00c0_c0f0 == 0x0080_80e0 {
        let cp = (b0 & 0x0f) << 12 | (word >> 2 & 0xfc0) | (word >> 16 & 0x3f);
        // Overlong forms and surrogates are ill-formed.
        if cp < 0x800 || (0xd800..0xe000).contains(&cp) {
            return None;
        }
        return Some((cp, 3));
    }
    if word & 0xc0e0 == 0x80c0 {
        let cp = (b0 & 0x1f) << 6 | (word >> 8 & 0x3f);
        return (cp >= 0x80).then_some((cp, 2));
    }
    if word & 0xc0c0_c0f8 == 0x8080_80f0 {
        let cp = (b0 & 0x07) << 18
            | (word >> 8 & 0x3f) << 12
            | (word >> 16 & 0x3f) << 6
            | (word >> 24 & 0x3f);
        return (0x1_0000..=0x10_ffff).contains(&cp).then_some((cp, 4));
    }
    None
}

/// The well-formed UTF-8 character at the start of `bytes` (whose first
/// byte is not ASCII) and its length; None if it is ill-formed or cut short.
#[inline]
pub(crate) fn decode(bytes: &[u8]) -> Option<(char, usize)> {
    let (cp, len) = decode_word(word_at(bytes, 0))?;
    Some((char::from_u32(cp)?, len))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsPassthrough,
    DcsIgnore,
    OscString,
    SosPmApcString,
}

/// The parser's state between calls to [`Parser::advance`]: sequences and
/// UTF-8 characters may be split anywhere.
#[derive(Clone, Debug)]
pub struct Parser {
    state: State,
    params: Params,
    /// The parameter being accumulated (digits seen since the last separator).
    cur: u32,
    /// Whether any byte of the current parameter has been seen.
    cur_started: bool,
    /// Set when parameters overflowed, so the sequence is flagged ignored.
    params_overflow: bool,
    intermediates: [u8; MAX_INTERMEDIATES],
    n_intermediates: usize,
    intermediates_overflow: bool,
    osc: Vec<u8>,
    /// A partial UTF-8 character carried across calls.
    utf8: [u8; 4],
    utf8_len: usize,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    /// A parser in the ground state.
    pub fn new() -> Parser {
        Parser {
            state: State::Ground,
            params: Params::default(),
            cur: 0,
            cur_started: false,
            params_overflow: false,
            intermediates: [0; MAX_INTERMEDIATES],
            n_intermediates: 0,
            intermediates_overflow: false,
            osc: Vec::new(),
            utf8: [0; 4],
            utf8_len: 0,
        }
    }

    /// True unless the parser is in the ground state with no partial UTF-8
    /// character pending.
    pub fn is_mid_sequence(&self) -> bool {
        self.state != State::Ground || self.utf8_len != 0
    }

    /// The input has ended (a whole buffer, not a stream): a UTF-8
    /// character cut short prints as U+FFFD, as `String::from_utf8_lossy`
    /// decodes it. An unfinished escape sequence is dropped.
    pub fn finish<P: Perform>(&mut self, perf: &mut P) {
        if self.utf8_len != 0 {
            self.utf8_len = 0;
            perf.print('\u{FFFD}');
        }
        self.state = State::Ground;
    }

    /// Feed bytes, calling `perf` for everything they complete.
    pub fn advance<P: Perform>(&mut self, perf: &mut P, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Ground => i += self.ground(perf, &bytes[i..]),
                State::CsiEntry | State::CsiParam => i += self.csi_params(perf, &bytes[i..]),
                State::Escape if bytes[i] == b'[' => {
                    self.clear_sequence();
                    self.state = State::CsiEntry;
                    i += 1;
                }
                _ => {
                    self.byte(perf, bytes[i]);
                    i += 1;
                }
            }
        }
    }

    /// The parameters and final byte of a CSI sequence in a tight loop (SGR
    /// heavy output is mostly this); anything unusual goes to `byte`.
    /// Returns how many bytes were consumed.
    fn csi_params<P: Perform>(&mut self, perf: &mut P, bytes: &[u8]) -> usize {
        // The parameter being read stays in locals (registers) until the
        // sequence ends or something unusual needs the general path.
        // So do the state (CsiParam from the first digit or `;` on) and
        // the count of values.
        let (mut cur, mut started) = (self.cur, self.cur_started);
        let mut len = self.params.len;
        for (i, &b) in bytes.iter().enumerate() {
            let digit = b.wrapping_sub(b'0');
            if digit < 10 {
                cur = (cur * 10 + u32::from(digit)).min(u32::from(u16::MAX));
                started = true;
            } else if b == b';' {
                if len < MAX_PARAMS {
                    self.params.values[len] = cur as u16;
                    len += 1;
                } else {
                    self.params_overflow = true;
                }
                (cur, started) = (0, false);
            } else {
                (self.cur, self.cur_started) = (cur, started);
                self.params.len = len;
                if i > 0 {
                    self.state = State::CsiParam;
                }
                if (0x40..=0x7e).contains(&b) {
                    self.csi_dispatch(perf, b);
                } else {
                    self.byte(perf, b);
                }
                return i + 1;
            }
        }
        (self.cur, self.cur_started) = (cur, started);
        self.params.len = len;
        if !bytes.is_empty() {
            self.state = State::CsiParam;
        }
        bytes.len()
    }

    /// Handle bytes in the ground state until a control byte (or the end)
    /// and return how many were consumed. Printable text goes out in runs.
    fn ground<P: Perform>(&mut self, perf: &mut P, bytes: &[u8]) -> usize {
        let mut i = 0;
        if self.utf8_len != 0 {
            i = self.finish_utf8(perf, bytes);
            if self.utf8_len != 0 {
                return i;
            }
        }
        loop {
            // Printable ASCII goes straight through, without UTF-8 checks.
            let end = i + ascii_run(&bytes[i..]);
            if end > i {
                perf.print_ascii(&bytes[i..end]);
                i = end;
            }
            let Some(&b) = bytes.get(i) else {
                return i;
            };
            if b < 0x80 {
                break;
            }
            // Non-ASCII text: the performer takes well-formed characters;
            // from an ill-formed or incomplete one the careful path takes
            // over up to the next control byte.
            let n = perf.print_utf8(&bytes[i..]);
            if n > 0 {
                i += n;
                continue;
            }
            let end = bytes[i..]
                .iter()
                .position(|&b| b < 0x20 || b == 0x7f)
                .map_or(bytes.len(), |p| i + p);
            self.print_lossy(perf, &bytes[i..end]);
            i = end;
            if i == bytes.len() {
                return i;
            }
        }
        if self.utf8_len != 0 {
            // A character cut short by a control byte is invalid.
            self.utf8_len = 0;
            perf.print('\u{FFFD}');
        }
        // `ESC [` is how nearly every sequence starts: straight to CSI,
        // rather than through the escape state a byte at a time.
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            self.clear_sequence();
            self.state = State::CsiEntry;
            return i + 2;
        }
        self.byte(perf, bytes[i]);
        i + 1
    }

    /// Print a run of non-control bytes as UTF-8, keeping an incomplete
    /// trailing character for the next call.
    fn print_lossy<P: Perform>(&mut self, perf: &mut P, mut run: &[u8]) {
        loop {
            match std::str::from_utf8(run) {
                Ok(s) => {
                    perf.print_str(s);
                    return;
                }
                Err(e) => {
                    let (good, rest) = run.split_at(e.valid_up_to());
                    if let Ok(s) = std::str::from_utf8(good) {
                        if !s.is_empty() {
                            perf.print_str(s);
                        }
                    }
                    match e.error_len() {
                        Some(n) => {
                            perf.print('\u{FFFD}');
                            run = &rest[n..];
                        }
                        None => {
                            // Incomplete at the end of the run: keep it.
                            let n = rest.len().min(4);
                            self.utf8[..n].copy_from_slice(&rest[..n]);
                            self.utf8_len = n;
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Continue a partial UTF-8 character with the start of `bytes`; returns
    /// how many bytes were consumed.
    fn finish_utf8<P: Perform>(&mut self, perf: &mut P, bytes: &[u8]) -> usize {
        let mut i = 0;
        while self.utf8_len != 0 && i < bytes.len() {
            let b = bytes[i];
            if !(0x80..0xc0).contains(&b) {
                // Not a continuation byte: the pending character is invalid.
                self.utf8_len = 0;
                perf.print('\u{FFFD}');
                return i;
            }
            self.utf8[self.utf8_len] = b;
            self.utf8_len += 1;
            i += 1;
            let buf = self.utf8;
            let have = &buf[..self.utf8_len];
            match std::str::from_utf8(have) {
                Ok(s) => {
                    self.utf8_len = 0;
                    perf.print_str(s);
                }
                Err(e) => {
                    if e.error_len().is_some() || self.utf8_len >= 4 {
                        self.utf8_len = 0;
                        perf.print('\u{FFFD}');
                    }
                }
            }
        }
        i
    }

    fn clear_sequence(&mut self) {
        self.params.clear();
        self.cur = 0;
        self.cur_started = false;
        self.params_overflow = false;
        self.n_intermediates = 0;
        self.intermediates_overflow = false;
    }

    fn collect(&mut self, b: u8) {
        if self.n_intermediates < MAX_INTERMEDIATES {
            self.intermediates[self.n_intermediates] = b;
            self.n_intermediates += 1;
        } else {
            self.intermediates_overflow = true;
        }
    }

    fn param_digit(&mut self, b: u8) {
        self.cur_started = true;
        self.cur = (self.cur * 10 + u32::from(b - b'0')).min(u32::from(u16::MAX));
    }

    /// End the current parameter at a `;` or `:` (or the final byte).
    fn param_end(&mut self, sub_next: bool) {
        let p = &mut self.params;
        if p.len < MAX_PARAMS {
            p.values[p.len] = self.cur as u16;
            p.len += 1;
            if sub_next && p.len < MAX_PARAMS {
                p.sub |= 1 << p.len;
            }
        } else {
            self.params_overflow = true;
        }
        self.cur = 0;
        self.cur_started = false;
    }

    fn param_finish(&mut self) {
        // A trailing parameter exists if digits were seen, or if a separator
        // was (then the last one is empty).
        if self.cur_started || !self.params.is_empty() {
            self.param_end(false);
        }
    }

    fn ignored(&self) -> bool {
        self.params_overflow || self.intermediates_overflow
    }

    fn csi_dispatch<P: Perform>(&mut self, perf: &mut P, b: u8) {
        self.param_finish();
        let ignore = self.ignored();
        perf.csi_dispatch(
            &self.params,
            &self.intermediates[..self.n_intermediates],
            ignore,
            b,
        );
        self.state = State::Ground;
    }

    fn osc_dispatch<P: Perform>(&mut self, perf: &mut P, bell: bool) {
        let mut fields: [&[u8]; MAX_OSC_PARAMS] = [&[]; MAX_OSC_PARAMS];
        let mut n = 0;
        let data = &self.osc[..];
        let mut start = 0;
        for (j, &c) in data.iter().enumerate() {
            if c == b';' && n < MAX_OSC_PARAMS - 1 {
                fields[n] = &data[start..j];
                n += 1;
                start = j + 1;
            }
        }
        fields[n] = &data[start..];
        n += 1;
        perf.osc_dispatch(&fields[..n], bell);
        self.osc.clear();
        if self.osc.capacity() > MAX_OSC {
            self.osc.shrink_to(MAX_OSC);
        }
    }

    /// Bytes that act the same in every state but the strings: CAN and SUB
    /// abort, ESC restarts. Returns true when handled.
    fn anywhere<P: Perform>(&mut self, perf: &mut P, b: u8) -> bool {
        match b {
            0x18 | 0x1a => {
                // The control first: it cancels the string, which the
                // performer may then leave unanswered.
                perf.execute(b);
                if self.state == State::DcsPassthrough {
                    perf.unhook();
                }
                self.state = State::Ground;
                true
            }
            0x1b => {
                match self.state {
                    State::DcsPassthrough => perf.unhook(),
                    State::OscString => self.osc_dispatch(perf, false),
                    _ => {}
                }
                self.clear_sequence();
                self.state = State::Escape;
                true
            }
            _ => false,
        }
    }

    /// One byte outside the ground state's text fast path.
    fn byte<P: Perform>(&mut self, perf: &mut P, b: u8) {
        if self.anywhere(perf, b) {
            return;
        }
        match self.state {
            State::Ground => {
                if b < 0x20 {
                    perf.execute(b);
                }
                // DEL is ignored; printable bytes never reach here.
            }
            State::Escape => match b {
                0x00..=0x1f => perf.execute(b),
                0x20..=0x2f => {
                    self.collect(b);
                    self.state = State::EscapeIntermediate;
                }
                b'[' => {
                    self.clear_sequence();
                    self.state = State::CsiEntry;
                }
                b']' => {
                    self.osc.clear();
                    self.state = State::OscString;
                }
                b'P' => {
                    self.clear_sequence();
                    self.state = State::DcsEntry;
                }
                b'X' | b'^' | b'_' => self.state = State::SosPmApcString,
                0x30..=0x7e => {
                    perf.esc_dispatch(&[], false, b);
                    self.state = State::Ground;
                }
                _ => {}
            },
            State::EscapeIntermediate => match b {
                0x00..=0x1f => perf.execute(b),
                0x20..=0x2f => self.collect(b),
                0x30..=0x7e => {
                    let ignore = self.ignored();
                    perf.esc_dispatch(&self.intermediates[..self.n_intermediates], ignore, b);
                    self.state = State::Ground;
                }
                _ => {}
            },
            State::CsiEntry => match b {
                0x00..=0x1f => perf.execute(b),
                0x20..=0x2f => {
                    self.collect(b);
                    self.state = State::CsiIntermediate;
                }
                b'0'..=b'9' => {
                    self.param_digit(b);
                    self.state = State::CsiParam;
                }
                b';' => {
                    self.param_end(false);
                    self.state = State::CsiParam;
                }
                b':' => {
                    self.param_end(true);
                    self.state = State::CsiParam;
                }
                0x3c..=0x3f => {
                    self.collect(b);
                    self.state = State::CsiParam;
                }
                0x40..=0x7e => self.csi_dispatch(perf, b),
                _ => {}
            },
            State::CsiParam => match b {
                0x00..=0x1f => perf.execute(b),
                b'0'..=b'9' => self.param_digit(b),
                b';' => self.param_end(false),
                b':' => self.param_end(true),
                0x3c..=0x3f => self.state = State::CsiIgnore,
                0x20..=0x2f => {
                    self.collect(b);
                    self.state = State::CsiIntermediate;
                }
                0x40..=0x7e => self.csi_dispatch(perf, b),
                _ => {}
            },
            State::CsiIntermediate => match b {
                0x00..=0x1f => perf.execute(b),
                0x20..=0x2f => self.collect(b),
                0x30..=0x3f => self.state = State::CsiIgnore,
                0x40..=0x7e => self.csi_dispatch(perf, b),
                _ => {}
            },
            State::CsiIgnore => match b {
                0x00..=0x1f => perf.execute(b),
                0x40..=0x7e => self.state = State::Ground,
                _ => {}
            },
            State::DcsEntry => match b {
                0x20..=0x2f => {
                    self.collect(b);
                    self.state = State::DcsIntermediate;
                }
                b'0'..=b'9' => {
                    self.param_digit(b);
                    self.state = State::DcsParam;
                }
                b';' => {
                    self.param_end(false);
                    self.state = State::DcsParam;
                }
                b':' => {
                    self.param_end(true);
                    self.state = State::DcsParam;
                }
                0x3c..=0x3f => {
                    self.collect(b);
                    self.state = State::DcsParam;
                }
                0x40..=0x7e => self.hook(perf, b),
                _ => {}
            },
            State::DcsParam => match b {
                b'0'..=b'9' => self.param_digit(b),
                b';' => self.param_end(false),
                b':' => self.param_end(true),
                0x3c..=0x3f => self.state = State::DcsIgnore,
                0x20..=0x2f => {
                    self.collect(b);
                    self.state = State::DcsIntermediate;
                }
                0x40..=0x7e => self.hook(perf, b),
                _ => {}
            },
            State::DcsIntermediate => match b {
                0x20..=0x2f => self.collect(b),
                0x30..=0x3f => self.state = State::DcsIgnore,
                0x40..=0x7e => self.hook(perf, b),
                _ => {}
            },
            State::DcsPassthrough => {
                if b != 0x7f {
                    perf.put(b);
                }
            }
            State::DcsIgnore | State::SosPmApcString => {}
            State::OscString => match b {
                0x07 => {
                    self.osc_dispatch(perf, true);
                    self.state = State::Ground;
                }
                0x00..=0x1f => {}
                _ => {
                    if self.osc.len() < MAX_OSC {
                        self.osc.push(b);
                    }
                }
            },
        }
    }

    fn hook<P: Perform>(&mut self, perf: &mut P, b: u8) {
        self.param_finish();
        let ignore = self.ignored();
        perf.hook(
            &self.params,
            &self.intermediates[..self.n_intermediates],
            ignore,
            b,
        );
        self.state = State::DcsPassthrough;
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
