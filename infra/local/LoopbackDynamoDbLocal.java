import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import org.eclipse.jetty.http.HttpHeader;
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
 * DynamoDB Local listening on 127.0.0.1 only (infra/local/dynamodb-local.ts runs this file with
 * Java's source launcher). DynamoDB Local has no bind-address option: its Jetty server is built
 * with `new Server(port)`, which listens on every interface, and it has no authentication, so
 * any host on the developer's network could read and write the tables (API keys included).
 *
 * The server is created the way AWS documents for running DynamoDB Local inside a program
 * (ServerRunner.createServerFromCommandLineArgs, same options as the command line); before it
 * starts, its Jetty connectors are given the host 127.0.0.1 (Jetty's public
 * ServerConnector.setHost). The Jetty server is a private field of DynamoDBProxyServer, hence
 * the one reflective read; if a DynamoDB Local release renames it, this fails at start with
 * NoSuchFieldException instead of silently listening everywhere
 * (test/integration/dynamodb-local.test.ts reads the listening sockets from the system).
 *
 * Listening on loopback is not enough against a web page: one that rebinds its own host name to
 * 127.0.0.1 is same-origin with DynamoDB Local, so no CORS setting applies, and DynamoDB Local
 * accepts any signature. Its requests still carry the page's host name in `Host`: a Jetty handler
 * in front of DynamoDB Local's answers 403 to any request whose `Host` is not 127.0.0.1 or
 * localhost on this port (the names the service and the key tool use).
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) ((ServerConnector) connector).setHost("127.0.0.1");
    server.setHandler(new LoopbackHostOnly(server.getHandler(), portOf(args)));
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

  /** Passes on only requests addressed to this loopback port by name; 403 for any other Host. */
  static final class LoopbackHostOnly extends Handler.Wrapper {
    private final Set<String> hosts;

    LoopbackHostOnly(Handler handler, int port) {
      super(handler);
      hosts = Set.of("127.0.0.1:" + port, "localhost:" + port);
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String host = request.getHeaders().get(HttpHeader.HOST);
      if (host != null && hosts.contains(host.toLowerCase(Locale.ROOT))) return super.handle(request, response, callback);
      response.setStatus(403);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
      response.write(true, ByteBuffer.wrap("Host not allowed\n".getBytes(StandardCharsets.UTF_8)), callback);
      return true;
    }
  }
}
