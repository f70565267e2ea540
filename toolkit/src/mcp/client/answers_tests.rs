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
        .map(|l| serde_json::from_slice(l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l)).unwrap())
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

/// What the SDK itself receives of `output`, given `chunk` bytes at a time
/// through [`ReadableAnswers`]: the messages it delivers, in order.
fn sdk_receives(output: &[u8], chunk: usize) -> Vec<serde_json::Value> {
    use rmcp::transport::Transport;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let output = Chunked {
            bytes: output.to_vec(),
            at: 0,
            chunk,
        };
        let mut transport = transport(output, tokio::io::sink());
        let mut received = Vec::new();
        while let Some(message) = transport.receive().await {
            received.push(serde_json::to_value(&message).unwrap());
        }
        received
    })
}

#[test]
fn an_answer_of_exactly_the_bound_with_its_id_at_the_end_fails_its_call() {
    // 16 MiB without its end: with it, one byte more than the SDK takes.
    // Read in pieces that divide the bound, the line's end comes alone.
    let output = message(
        "{\"result\":{\"text\":\"",
        "\"},\"jsonrpc\":\"2.0\",\"id\":21}",
        MAX_LINE,
    );
    for chunk in [8 << 10, 64 << 10, 1 << 20, usize::MAX] {
        let received = sdk_receives(&output, chunk);
        assert_eq!(received.len(), 1, "in chunks of {chunk}: {received:?}");
        assert_eq!(received[0]["id"], json!(21), "in chunks of {chunk}");
        assert_eq!(received[0]["error"]["code"], json!(UNREADABLE_ANSWER));
    }
}

#[test]
fn an_answer_one_byte_within_the_bound_reaches_the_sdk_as_it_came() {
    let mut output = message(
        "{\"jsonrpc\":\"2.0\",\"id\":22,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"",
        "\"}]}}",
        MAX_LINE - 1,
    );
    output.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":23,\"result\":{}}\n");
    for chunk in [8 << 10, usize::MAX] {
        let received = sdk_receives(&output, chunk);
        assert_eq!(received.len(), 2, "in chunks of {chunk}");
        assert_eq!(received[0]["id"], json!(22));
        assert!(received[0].get("result").is_some(), "in chunks of {chunk}");
        assert_eq!(received[1]["id"], json!(23));
    }
}

#[test]
fn unreadable_answers_whatever_their_bytes_fail_their_calls() {
    let output: &[u8] = concat!(
        // Read as they are, CR and BOM or not.
        "{\"jsonrpc\":\"2.0\",\"id\":31,\"result\":{}}\r\n",
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":32,\"result\":{}}\n",
        // A CR in the text, not escaped; a NUL after the message.
        "{\"jsonrpc\":\"2.0\",\"id\":33,\"result\":{\"t\":\"a\rb\"}}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":34,\"result\":{}}\0\n",
        // A BOM before an unreadable one, and a lone CR ending none.
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":35,\"result\":1e400}\r\n",
        "{\"jsonrpc\":\"2.0\",\"id\":36,\"result\":1e400}\r{\"x\":1}\n",
    )
    .as_bytes();
    let mut output = output.to_vec();
    // Bytes that are not UTF-8 in a text.
    output.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":37,\"result\":{\"t\":\"\xff\xfe\"}}\n");
    let read = lines(&read_any_way(&output));
    let ids: Vec<_> = read.iter().map(|l| l["id"].clone()).collect();
    assert_eq!(ids, [31, 32, 33, 34, 35, 36, 37].map(|i| json!(i)));
    for line in &read[2..] {
        assert_eq!(line["error"]["code"], json!(UNREADABLE_ANSWER), "{line}");
    }
    let received = sdk_receives(&output, 7);
    assert_eq!(received.len(), 7, "{received:?}");
}

#[test]
fn an_unreadable_answer_with_its_id_after_the_result_fails_its_call() {
    // As some SDKs write an answer: the result first. Not JSON (a float
    // written as Python writes infinity), so it cannot be read past it.
    let output = b"{\"result\":{\"x\":Infinity},\"jsonrpc\":\"2.0\",\"id\":41}\n";
    let read = lines(&read_any_way(output));
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0]["id"], json!(41));
    assert_eq!(read[0]["error"]["code"], json!(UNREADABLE_ANSWER));
}

#[test]
fn what_is_said_of_an_unreadable_answer_stays_short() {
    let big = "y".repeat(10 << 20);
    for output in [
        format!("{{\"jsonrpc\":\"{big}\",\"id\":51,\"result\":{{}}}}\n"),
        format!("{{\"jsonrpc\":\"2.0\",\"id\":51,\"result\":{{\"{big}\":1e400}}}}\n"),
        format!("{{\"jsonrpc\":\"2.0\",\"id\":51,\"error\":{{\"code\":\"{big}\"}}}}\n"),
    ] {
        let read = lines(&read(output.as_bytes(), 64 << 10));
        assert_eq!(read.len(), 1);
        let said = read[0]["error"]["message"].as_str().unwrap();
        assert!(said.len() < 1024, "{} bytes said", said.len());
    }
}

#[test]
fn a_line_over_the_bound_cut_by_the_output_ending_is_dropped() {
    let mut output = message(
        "{\"jsonrpc\":\"2.0\",\"id\":61,\"result\":\"",
        "\"}",
        MAX_LINE + 5,
    );
    output.pop();
    assert!(read(&output, 8 << 10).is_empty());
    assert!(sdk_receives(&output, 8 << 10).is_empty());
}

#[test]
fn an_id_in_a_line_that_is_no_answer_fails_no_call() {
    let output = concat!(
        // A server's print on its output, naming a request it saw.
        "got {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\"}\n",
        // A log line in JSON, an `id` inside it, read whole.
        "{\"level\":\"debug\",\"request\":{\"id\":4}}\n",
        "{\"level\":\"debug\",\"seen\":{\"x\":1},\"id\":null}\n",
    );
    assert_eq!(read_any_way(output.as_bytes()), output.as_bytes());
}

#[test]
fn an_unreadable_answer_just_within_the_bound_fails_its_call() {
    // The SDK would take the line; what is said in its place is longer.
    let start = "{\"jsonrpc\":\"2.0\",\"result\":1e400,\"id\":\"";
    let output = message(start, "\"}", MAX_LINE - 1);
    let received = sdk_receives(&output, 8 << 10);
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0]["error"]["code"], json!(UNREADABLE_ANSWER));
    assert_eq!(
        received[0]["id"].as_str().map(str::len),
        Some(MAX_LINE - 1 - start.len() - 2)
    );
}

#[test]
fn a_request_of_the_servers_in_the_wrong_shape_is_still_refused_by_the_sdk() {
    use rmcp::transport::Transport;
    use tokio::io::AsyncReadExt;
    let output =
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":1}\n";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (received, written) = runtime.block_on(async {
        let (input, mut server_reads) = tokio::io::duplex(1 << 16);
        let output = Chunked {
            bytes: output.to_vec(),
            at: 0,
            chunk: 5,
        };
        let mut transport = transport(output, input);
        let mut received = Vec::new();
        while let Some(message) = transport.receive().await {
            received.push(message);
        }
        drop(transport);
        let mut written = Vec::new();
        server_reads.read_to_end(&mut written).await.unwrap();
        (received.len(), written)
    });
    assert_eq!(received, 0);
    let written = lines(&written);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["error"]["code"], json!(-32600));
}

#[test]
fn an_id_in_float_form_is_the_integer_it_stands_for() {
    let output = b"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":1e400}\n";
    let read = lines(&read_any_way(output));
    assert_eq!(read[0]["id"], json!(1));
    assert_eq!(read[0]["error"]["code"], json!(UNREADABLE_ANSWER));
}
