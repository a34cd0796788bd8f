import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local listening on 127.0.0.1 only, and answering only the service that started it
 * (infra/local/dynamodb-local.ts runs this class; docs/decisions/0173-dynamodb-local-answers-only-the-service-that-started-it.md).
 *
 * Loopback: DynamoDB Local has no bind-address option (its Jetty server is built with
 * `new Server(port)`, every interface). The server is created the way AWS documents for running
 * DynamoDB Local inside a program (ServerRunner.createServerFromCommandLineArgs, the command
 * line's options), and its connectors are given the host 127.0.0.1 (Jetty's public
 * ServerConnector.setHost) before it starts. The Jetty server is a private field of
 * DynamoDBProxyServer, hence the one reflective read: a release that renames it fails at start.
 *
 * Its own caller only: DynamoDB Local accepts any signature, so every other user of the machine
 * could read and write its tables (key hashes included) over the loopback port. The launcher reads
 * an access key id and a secret access key from its standard input (never its command line or
 * environment, which other users or files could show) and a Jetty handler in front of DynamoDB
 * Local recomputes each request's AWS Signature Version 4 with that secret: a request not signed
 * with it gets 403 before DynamoDB Local sees it, as does one whose host, date or operation
 * (x-amz-target) is not signed, or whose date is more than 15 minutes from now
 * (docs/decisions/0173-dynamodb-local-answers-only-the-service-that-started-it.md).
 *
 * Its own name only: a web page that rebinds its host name to 127.0.0.1 is same-origin with it;
 * its requests carry that name in `Host`, which must be 127.0.0.1 or localhost on this port.
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String accessKeyId = input.readLine();
    String secretAccessKey = input.readLine();
    if (accessKeyId == null || accessKeyId.isEmpty() || secretAccessKey == null || secretAccessKey.isEmpty()) {
      System.err.println("LoopbackDynamoDbLocal reads an access key id and a secret access key, one a line, from its standard input");
      System.exit(2);
    }
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) ((ServerConnector) connector).setHost("127.0.0.1");
    server.setHandler(new OwnCallerOnly(server.getHandler(), portOf(args), accessKeyId, secretAccessKey));
    proxy.start();
    for (Connector connector : server.getConnectors()) {
      ServerConnector bound = (ServerConnector) connector;
      // The readiness line dynamodb-local.ts waits for.
      System.out.println("DynamoDB Local listening on " + bound.getHost() + ":" + bound.getLocalPort());
    }
  }

  /** The `-port` option's value (DynamoDB Local's default, 8000, without one). */
  static int portOf(String[] args) {
    for (int i = 0; i + 1 < args.length; i++) if (args[i].equals("-port")) return Integer.parseInt(args[i + 1]);
    return 8000;
  }

  /** Passes on only requests addressed to this port by name and signed with this start's secret; 403 for any other. */
  static final class OwnCallerOnly extends Handler.Wrapper {
    /** DynamoDB's largest request (BatchWriteItem, 16 MB) with room to spare. */
    private static final int maxBodyBytes = 32 * 1024 * 1024;
    private static final Pattern authorization = Pattern.compile(
        "AWS4-HMAC-SHA256 Credential=([^/,\\s]+)/(\\d{8})/([^/,\\s]+)/([^/,\\s]+)/aws4_request,\\s*"
            + "SignedHeaders=([a-z0-9;-]+),\\s*Signature=([0-9a-f]{64})");

    private final Set<String> hosts;
    private final byte[] accessKeyId;
    private final byte[] secret;

    OwnCallerOnly(Handler handler, int port, String accessKeyId, String secretAccessKey) {
      super(handler);
      hosts = Set.of("127.0.0.1:" + port, "localhost:" + port);
      this.accessKeyId = accessKeyId.getBytes(StandardCharsets.UTF_8);
      this.secret = ("AWS4" + secretAccessKey).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String host = request.getHeaders().get(HttpHeader.HOST);
      if (host == null || !hosts.contains(host.toLowerCase(Locale.ROOT))) return refuse(response, callback, "text/plain", "Host not allowed\n");
      Matcher signed = authorization.matcher(String.valueOf(request.getHeaders().get(HttpHeader.AUTHORIZATION)));
      // The key id is checked before any of the body is read: a stranger costs no buffer.
      if (!signed.matches() || !MessageDigest.isEqual(signed.group(1).getBytes(StandardCharsets.UTF_8), accessKeyId))
        return refuse(response, callback, "UnrecognizedClientException", "The request is not signed with this DynamoDB Local's credentials.");
      String unsound = unsoundSignature(request, signed, Instant.now());
      if (unsound != null) return refuse(response, callback, "InvalidSignatureException", unsound);
      ByteBuffer body;
      try {
        body = Content.Source.asByteBufferAsync(request, maxBodyBytes).get();
      } catch (ExecutionException tooLargeOrFailed) {
        return refuse(response, callback, "ValidationException", "The request body could not be read within " + maxBodyBytes + " bytes.");
      }
      byte[] bytes = new byte[body.remaining()];
      body.get(bytes);
      if (!MessageDigest.isEqual(HexFormat.of().parseHex(signed.group(6)), signature(request, signed, bytes)))
        return refuse(response, callback, "InvalidSignatureException", "The request signature does not match this DynamoDB Local's credentials.");
      return super.handle(new Replayed(request, bytes), response, callback);
    }

    /** The headers a request must sign: its host, its date (which the signature's scope and age are read from) and its operation. */
    private static final List<String> mustSign = List.of("host", "x-amz-date", "x-amz-target");
    /** How far a signature's date may be from now, either way: AWS's own bound. */
    private static final Duration skew = Duration.ofMinutes(15);
    private static final DateTimeFormatter amzDate = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /**
     * Why a signature from this start's credentials is still refused, as AWS would refuse it (IAM
     * User Guide, "Signature Version 4 signing" and "Troubleshoot signed requests"): a header that
     * must be signed is not (DynamoDB takes its operation from x-amz-target: unsigned, a captured
     * request could be replayed as another operation), the scope's day is not the date's, or the
     * date is more than 15 minutes from now (a captured request replays for 15 minutes at most).
     * Null when sound.
     */
    static String unsoundSignature(Request request, Matcher signed, Instant now) {
      List<String> names = Arrays.asList(signed.group(5).split(";"));
      for (String name : mustSign) if (!names.contains(name) || request.getHeaders().get(name) == null) return "'" + name + "' must be a signed header of the request.";
      Instant date;
      try {
        date = Instant.from(amzDate.parse(request.getHeaders().get("x-amz-date")));
      } catch (DateTimeParseException notIso8601Basic) {
        return "x-amz-date must be an ISO 8601 basic date such as 20261130T101500Z.";
      }
      String day = amzDate.format(date).substring(0, 8);
      if (!signed.group(2).equals(day)) return "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + signed.group(2) + "' != '" + day + "'";
      if (date.isBefore(now.minus(skew))) return "Signature expired: " + amzDate.format(date) + " is now earlier than " + amzDate.format(now.minus(skew)) + " (" + amzDate.format(now) + " - 15 min.)";
      if (date.isAfter(now.plus(skew))) return "Signature not yet current: " + amzDate.format(date) + " is still later than " + amzDate.format(now.plus(skew)) + " (" + amzDate.format(now) + " + 15 min.)";
      return null;
    }

    /** The SigV4 signature of the request as received, with the secret of this start. */
    private byte[] signature(Request request, Matcher signed, byte[] body) throws Exception {
      String[] names = signed.group(5).split(";");
      StringBuilder headers = new StringBuilder();
      for (String name : names) {
        List<String> values = new ArrayList<>();
        for (HttpField value : request.getHeaders().getFields(name)) values.add(value.getValue().trim().replaceAll("\\s+", " "));
        headers.append(name).append(':').append(String.join(",", values)).append('\n');
      }
      String query = request.getHttpURI().getQuery();
      String[] pairs = query == null || query.isEmpty() ? new String[0] : query.split("&");
      Arrays.sort(pairs);
      String canonicalRequest = String.join("\n",
          request.getMethod(),
          request.getHttpURI().getPath(),
          String.join("&", pairs),
          headers.toString(),
          signed.group(5),
          hex(MessageDigest.getInstance("SHA-256").digest(body)));
      String date = String.valueOf(request.getHeaders().get("x-amz-date"));
      String scope = signed.group(2) + "/" + signed.group(3) + "/" + signed.group(4) + "/aws4_request";
      String stringToSign = String.join("\n",
          "AWS4-HMAC-SHA256",
          date,
          scope,
          hex(MessageDigest.getInstance("SHA-256").digest(canonicalRequest.getBytes(StandardCharsets.UTF_8))));
      byte[] key = secret;
      for (String part : new String[] {signed.group(2), signed.group(3), signed.group(4), "aws4_request"}) key = hmac(key, part);
      return hmac(key, stringToSign);
    }

    private static byte[] hmac(byte[] key, String data) throws Exception {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    private static String hex(byte[] bytes) {
      return HexFormat.of().formatHex(bytes);
    }

    /** 403 with DynamoDB's JSON error shape (the SDK names the error by `__type`), or plain text for a foreign Host. */
    private static boolean refuse(Response response, Callback callback, String type, String message) {
      response.setStatus(403);
      boolean plain = type.equals("text/plain");
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, plain ? "text/plain" : "application/x-amz-json-1.0");
      String body = plain ? message : "{\"__type\":\"com.amazon.coral.service#" + type + "\",\"message\":\"" + message + "\"}";
      response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
      return true;
    }
  }

  /** The request with its body, already read for the signature, handed to DynamoDB Local once more. */
  static final class Replayed extends Request.Wrapper {
    private final byte[] body;
    private boolean read;

    Replayed(Request request, byte[] body) {
      super(request);
      this.body = body;
    }

    @Override
    public Content.Chunk read() {
      if (read) return Content.Chunk.EOF;
      read = true;
      return Content.Chunk.from(ByteBuffer.wrap(body), true);
    }

    @Override
    public void demand(Runnable demandCallback) {
      demandCallback.run();
    }
  }
}
