import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
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
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
    for (Connector connector : server.getConnectors()) {
      ServerConnector bound = (ServerConnector) connector;
      // The readiness line dynamodb-local.ts waits for.
      System.out.println("DynamoDB Local listening on " + bound.getHost() + ":" + bound.getLocalPort());
    }
  }
}
