use super::*;
use tokio::io::AsyncReadExt;

/// A reader that gives `bytes` at most `chunk` at a time.
struct Chunked {
    bytes: Vec<u8>,
    at: usize,
    chunk: usize,
}

impl AsyncRead for Chunked {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let n = this
            .chunk
            .min(buf.remaining())
            .min(this.bytes.len() - this.at);
        buf.put_slice(&this.bytes[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// What the SDK reads of `output`, given `chunk` bytes at a time.
fn read(output: &[u8], chunk: usize) -> Vec<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut answers = ReadableAnswers::new(Chunked {
            bytes: output.to_vec(),
            at: 0,
            chunk,
        });
        let mut read = Vec::new();
        answers.read_to_end(&mut read).await.unwrap();
        read
    })
}

/// [`read`] at every chunk size that matters, each giving the same.
fn read_any_way(output: &[u8]) -> Vec<u8> {
    let whole = read(output, usize::MAX);
    for chunk in [1, 2, 3, 7, 64, 8 << 10] {
        assert_eq!(read(output, chunk), whole, "in chunks of {chunk}");
    }
    whole
}

fn lines(read: &[u8]) -> Vec<serde_json::Value> {
    read.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

#[test]
fn readable_lines_pass_as_they_came() {
    let output = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\r\n",
        "\n",
        "  \n",
        // Not JSON at all, and no answer: the SDK ignores it as it does.
        "hello from a server's print\n",
        // A request of the server's in the wrong shape: the SDK answers it.
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":1e400}\n",
        // A notification it cannot read: the SDK drops it.
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1e400}}\n",
        // A last line without its end.
        "{\"jsonrpc\":\"2.0\",\"id\":2,"
    );
    assert_eq!(read_any_way(output.as_bytes()), output.as_bytes());
}

#[test]
fn an_answer_that_cannot_be_read_becomes_an_error_answer_to_its_request() {
    let output = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[{\"minimum\":1e400}]}}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":\"s-6\",\"result\":{\"content\":[1,2,}\n",
        // Neither a result nor an error.
        "{\"jsonrpc\":\"2.0\",\"id\":7}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n",
    );
    let read = lines(&read_any_way(output.as_bytes()));
    assert_eq!(read.len(), 4);
    for (line, id) in read.iter().zip([json!(5), json!("s-6"), json!(7)]) {
        assert_eq!(line["id"], id, "{line}");
        assert_eq!(line["error"]["code"], json!(UNREADABLE_ANSWER), "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("its answer could not be read: "),
            "{message}"
        );
        // The SDK reads what is put in its place.
        let text = serde_json::to_vec(line).unwrap();
        serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(&text).unwrap();
    }
    assert!(
        read[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("out of range")
    );
    assert_eq!(read[3], json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
}

/// A message of `length` bytes (its end excluded): `start`, filler, `end`.
fn message(start: &str, end: &str, length: usize) -> Vec<u8> {
    let mut message = start.as_bytes().to_vec();
    message.resize(length - end.len(), b'x');
    message.extend_from_slice(end.as_bytes());
    message.push(b'\n');
    message
}

#[test]
fn an_answer_over_the_bound_becomes_an_error_answer_to_its_request() {
    let big = MAX_LINE + 1000;
    // The id first, or after the result (as some SDKs write it), or spaced.
    let cases = [
        (
            "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{\"text\":\"",
            "\"}}",
            json!(11),
        ),
        (
            "{\"result\":{\"text\":\"",
            "\"},\"jsonrpc\":\"2.0\",\"id\":\"r12\"}",
            json!("r12"),
        ),
        ("{\"result\":{\"text\":\"", "\"}, \"id\" : 13 }", json!(13)),
    ];
    let mut output = Vec::new();
    for (start, end, _) in &cases {
        output.extend(message(start, end, big));
    }
    output.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{}}\n");
    let read = lines(&read(&output, 64 << 10));
    assert_eq!(read.len(), 4, "{read:?}");
    for (line, (_, _, id)) in read.iter().zip(&cases) {
        assert_eq!(&line["id"], id);
        assert_eq!(line["error"]["code"], json!(UNREADABLE_ANSWER));
        let said = line["error"]["message"].as_str().unwrap();
        assert!(said.contains(&format!("was {big} bytes")), "{said}");
    }
    assert_eq!(read[3]["id"], json!(14));
}

#[test]
fn a_message_over_the_bound_that_answers_nothing_is_dropped() {
    let big = MAX_LINE + 10;
    let mut output = Vec::new();
    // A request, a notification: no request of the client's to fail.
    output.extend(message(
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":\"",
        "\"}",
        big,
    ));
    output.extend(message(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":\"",
        "\"}",
        big,
    ));
    // No id at either end; one in the text, its quotes escaped, is none.
    output.extend(message("{\"result\":\"", "\\\"id\\\": 4\"}", big));
    // No id anywhere.
    output.extend(message("{\"result\":\"", "", big));
    output.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":15,\"result\":{}}\n");
    let read = lines(&read(&output, 64 << 10));
    assert_eq!(
        read,
        vec![json!({"jsonrpc": "2.0", "id": 15, "result": {}})]
    );
}

#[test]
fn a_line_without_end_is_held_within_bounds() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (mut server, client) = tokio::io::duplex(1 << 20);
        let mut answers = ReadableAnswers::new(client);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..100 {
                server.write_all(&chunk).await.unwrap();
            }
            server.write_all(b"\n").await.unwrap();
        });
        let mut read = Vec::new();
        answers.read_to_end(&mut read).await.unwrap();
        writer.await.unwrap();
        assert!(read.is_empty(), "{} bytes", read.len());
        assert!(answers.line.capacity() <= MAX_LINE);
    });
}

#[test]
fn an_id_is_found_near_the_end_only_as_a_key() {
    assert_eq!(id_near_end(b"xx\"},\"id\":3}"), Some(RequestId::Number(3)));
    assert_eq!(
        id_near_end(b"xx\"},\"id\" :\t\"a\"}"),
        Some(RequestId::String("a".into()))
    );
    assert_eq!(id_near_end(b"xx \\\"id\\\":3\"}"), None);
    // An escaped backslash before a real quote: the key is real.
    assert_eq!(
        id_near_end(b"x\\\\\",\"id\":4}"),
        Some(RequestId::Number(4))
    );
    assert_eq!(id_near_end(b"\"id\":{\"a\":1}}"), None);
    assert_eq!(id_near_end(b""), None);
}

use serde_json::json;
