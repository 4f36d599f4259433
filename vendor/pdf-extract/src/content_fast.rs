// docintel: a fast content-stream decoder for the common case.
//
// It produces exactly what lopdf 0.42's lenient `Content::decode` produces
// (same operations, operators and operand objects, reals as f32), for
// streams made of numbers, names, literal and hex strings, arrays of those
// and operators. On anything else (comments, inline images,
// `null`/`true`/`false`, references inside arrays, bytes lopdf would stop
// at, deep nesting) it returns `None` and the caller decodes the whole
// stream with lopdf instead, so the result is lopdf's in every case.
// Dictionaries (marked-content properties) are decoded here too.

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Object, StringFormat};

/// Nesting (arrays, parentheses in strings) beyond which lopdf decides.
const MAX_DEPTH: usize = 16;

/// `None`: let lopdf decode this stream.
pub(crate) fn decode(bytes: &[u8]) -> Option<Content> {
    let mut p = Parser { b: bytes, i: 0 };
    let mut operations = Vec::with_capacity(bytes.len() / 16);
    let mut operands: Vec<Object> = Vec::with_capacity(8);
    p.content_space();
    while p.i < p.b.len() {
        let c = p.b[p.i];
        match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'*' | b'\'' | b'"' => {
                let start = p.i;
                while p.i < p.b.len() && is_operator_byte(p.b[p.i]) {
                    p.i += 1;
                }
                let op = &p.b[start..p.i];
                if op.starts_with(b"null") || op.starts_with(b"true") || op.starts_with(b"false") || op.starts_with(b"BI") {
                    return None;
                }
                // ASCII by construction.
                let operator = std::str::from_utf8(op).ok()?.to_string();
                // One exact allocation per operand list (none when empty).
                let operands = operands.drain(..).collect();
                operations.push(Operation { operator, operands });
            }
            _ => {
                let operand = p.object(0, false)?;
                operands.push(operand);
            }
        }
        p.content_space();
    }
    // Operands with no operator at the end: lopdf drops them too.
    Some(Content { operations })
}

fn is_operator_byte(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'*' || c == b'\'' || c == b'"'
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\0' | b'\x0C')
}

fn is_delimiter(c: u8) -> bool {
    matches!(c, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// lopdf's `content_space`: spaces, tabs, CR and LF only.
    fn content_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.i += 1;
        }
    }

    /// lopdf's `space` inside arrays (whitespace; a comment makes us give up).
    fn array_space(&mut self) -> Option<()> {
        while let Some(c) = self.peek() {
            if is_whitespace(c) {
                self.i += 1;
            } else if c == b'%' {
                return None;
            } else {
                break;
            }
        }
        Some(())
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// One operand (top level) or array element (`in_array`).
    fn object(&mut self, depth: usize, in_array: bool) -> Option<Object> {
        match self.peek()? {
            b'0'..=b'9' | b'+' | b'-' | b'.' => self.number(in_array),
            b'/' => self.name(),
            b'(' => self.literal_string(),
            b'<' if self.b.get(self.i + 1) == Some(&b'<') => self.dictionary(depth),
            b'<' => self.hex_string(),
            b'[' => self.array(depth),
            _ => None,
        }
    }

    fn number(&mut self, in_array: bool) -> Option<Object> {
        let start = self.i;
        if let Some(b'+' | b'-') = self.peek() {
            self.i += 1;
        }
        let int_digits = self.digits();
        let is_real = if int_digits > 0 {
            self.peek() == Some(b'.')
        } else {
            self.peek() == Some(b'.') && matches!(self.b.get(self.i + 1), Some(b'0'..=b'9'))
        };
        if is_real {
            self.i += 1;
            self.digits();
            let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
            return text.parse::<f32>().ok().map(Object::Real);
        }
        if int_digits == 0 {
            return None;
        }
        if in_array && self.b[start].is_ascii_digit() && self.maybe_reference() {
            return None;
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        text.parse::<i64>().ok().map(Object::Integer)
    }

    /// Whether an unsigned integer just read may start `N G R` (lopdf then
    /// reads a reference): another integer, then `R`, after whitespace.
    fn maybe_reference(&self) -> bool {
        let mut j = self.i;
        while j < self.b.len() && (is_whitespace(self.b[j]) || self.b[j] == b'%') {
            j += 1;
        }
        let k = j;
        while j < self.b.len() && self.b[j].is_ascii_digit() {
            j += 1;
        }
        if j == k {
            return false;
        }
        while j < self.b.len() && (is_whitespace(self.b[j]) || self.b[j] == b'%') {
            j += 1;
        }
        self.b.get(j) == Some(&b'R')
    }

    fn name(&mut self) -> Option<Object> {
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == b'#' || is_whitespace(c) || is_delimiter(c) {
                break;
            }
            self.i += 1;
        }
        if self.peek() != Some(b'#') {
            return Some(Object::Name(self.b[start..self.i].to_vec()));
        }
        let mut out = self.b[start..self.i].to_vec();
        while let Some(c) = self.peek() {
            if c == b'#' {
                let hi = hex_value(*self.b.get(self.i + 1)?)?;
                let lo = hex_value(*self.b.get(self.i + 2)?)?;
                out.push(hi << 4 | lo);
                self.i += 3;
            } else if !is_whitespace(c) && !is_delimiter(c) {
                out.push(c);
                self.i += 1;
            } else {
                break;
            }
        }
        Some(Object::Name(out))
    }

    fn literal_string(&mut self) -> Option<Object> {
        self.i += 1;
        // Common case: no escape, no nested parenthesis.
        let rest = &self.b[self.i..];
        if let Some(end) = rest.iter().position(|&c| matches!(c, b'(' | b')' | b'\\')) {
            if rest[end] == b')' {
                self.i += end + 1;
                return Some(Object::String(rest[..end].to_vec(), StringFormat::Literal));
            }
        }
        let mut out = Vec::with_capacity(32);
        self.literal_inner(&mut out, 0)?;
        Some(Object::String(out, StringFormat::Literal))
    }

    /// The bytes up to and including the closing parenthesis.
    fn literal_inner(&mut self, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                b')' => return Some(()),
                b'(' => {
                    if depth + 1 >= MAX_DEPTH {
                        return None;
                    }
                    out.push(b'(');
                    self.literal_inner(out, depth + 1)?;
                    out.push(b')');
                }
                b'\\' => {
                    let e = self.peek()?;
                    match e {
                        b'0'..=b'7' => {
                            let mut v: u16 = 0;
                            let mut n = 0;
                            while n < 3 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u16::from(d - b'0');
                                        self.i += 1;
                                        n += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v as u8);
                        }
                        b'\r' => {
                            self.i += 1;
                            if self.peek() == Some(b'\n') {
                                self.i += 1;
                            }
                        }
                        b'\n' => self.i += 1,
                        b'n' => {
                            out.push(b'\n');
                            self.i += 1;
                        }
                        b'r' => {
                            out.push(b'\r');
                            self.i += 1;
                        }
                        b't' => {
                            out.push(b'\t');
                            self.i += 1;
                        }
                        b'b' => {
                            out.push(b'\x08');
                            self.i += 1;
                        }
                        b'f' => {
                            out.push(b'\x0C');
                            self.i += 1;
                        }
                        other => {
                            out.push(other);
                            self.i += 1;
                        }
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn hex_string(&mut self) -> Option<Object> {
        if self.b.get(self.i + 1) == Some(&b'<') {
            return None;
        }
        self.i += 1;
        let len = self.b[self.i..].iter().position(|&c| c == b'>').unwrap_or(0);
        let mut out = Vec::with_capacity(len.div_ceil(2));
        let mut high = true;
        loop {
            let c = self.peek()?;
            if is_whitespace(c) {
                self.i += 1;
            } else if let Some(v) = hex_value(c) {
                self.i += 1;
                if high {
                    out.push(v << 4);
                } else if let Some(last) = out.last_mut() {
                    *last |= v;
                }
                high = !high;
            } else if c == b'>' {
                self.i += 1;
                return Some(Object::String(out, StringFormat::Hexadecimal));
            } else {
                return None;
            }
        }
    }

    /// `<< /Key value ... >>` (later duplicate keys replace earlier ones in
    /// place, as lopdf's `Dictionary::set` does).
    fn dictionary(&mut self, depth: usize) -> Option<Object> {
        if depth + 1 >= MAX_DEPTH {
            return None;
        }
        self.i += 2;
        self.array_space()?;
        let mut dict = Dictionary::new();
        loop {
            match self.peek()? {
                b'>' if self.b.get(self.i + 1) == Some(&b'>') => {
                    self.i += 2;
                    return Some(Object::Dictionary(dict));
                }
                b'/' => {
                    let Object::Name(key) = self.name()? else { return None };
                    self.array_space()?;
                    let value = self.object(depth + 1, true)?;
                    self.array_space()?;
                    dict.set(key, value);
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Object> {
        if depth + 1 >= MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.array_space()?;
        let mut items = Vec::new();
        loop {
            match self.peek()? {
                b']' => {
                    self.i += 1;
                    return Some(Object::Array(items));
                }
                _ => {
                    items.push(self.object(depth + 1, true)?);
                    self.array_space()?;
                }
            }
        }
    }
}
