package dev.ledgerline.transfers.redis;

import io.vertx.redis.client.Command;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertSame;

/** The commands the service sends by name are the client's own, whether found by constant or by the client's look-up. */
class CommandNamesTest {

    @Test
    void eachNameIsTheClientsCommand() {
        for (String name : new String[] {"GET", "SET", "SADD", "SREM", "SRANDMEMBER", "PING", "HGET", "CLIENT"}) {
            assertSame(Command.create(name), RedisCommands.command(name), name);
        }
    }
}
