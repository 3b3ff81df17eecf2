//! Reading the bridge's input as lines with a size limit: a line over the
//! limit is skipped (reported by its size) without ever being held in
//! memory whole, and the next line is read as usual.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One frame of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A line, without its `\n` (or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than the limit, of this many bytes, skipped.
    TooLong(usize),
    /// The end of input.
    Eof,
}

pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
        }
    }

    /// The next frame. A last line without a newline is still a line.
    pub(crate) async fn next(&mut self) -> io::Result<Frame> {
        let mut line = Vec::new();
        // Bytes of the current line so far, kept or not.
        let mut length = 0usize;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(match length {
                    0 => Frame::Eof,
                    n if n > self.max => Frame::TooLong(n),
                    _ => Frame::Line(trim_cr(line)),
                });
            }
            let (chunk, end) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            length += chunk.len();
            if length <= self.max {
                line.extend_from_slice(chunk);
            } else if !line.is_empty() {
                line = Vec::new();
            }
            let consumed = end.unwrap_or(chunk.len());
            self.inner.consume(consumed);
            if end.is_some() {
                return Ok(if length > self.max {
                    Frame::TooLong(length)
                } else {
                    Frame::Line(trim_cr(line))
                });
            }
        }
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            let frame = reader.next().await.unwrap();
            let end = frame == Frame::Eof;
            out.push(frame);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_skipped_and_reading_goes_on() {
        let input = b"short\r\n0123456789abcdef\nnext\nlast-no-newline";
        assert_eq!(
            frames(input, 8).await,
            [
                Frame::Line(b"short".to_vec()),
                Frame::TooLong(16),
                Frame::Line(b"next".to_vec()),
                Frame::TooLong(15),
                Frame::Eof,
            ]
        );
        assert_eq!(
            frames(b"\n", 8).await,
            [Frame::Line(Vec::new()), Frame::Eof]
        );
    }
}
