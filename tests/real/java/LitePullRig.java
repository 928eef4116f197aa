// Real DefaultLitePullConsumers for the real-kit tests, run by the JVM's source launcher
// (`java -cp KIT_CLIENT_JARS LitePullRig.java ...`: no JDK compiler needed, the JRE's
// jdk.compiler module compiles it), against the client jars of the kit's version.
//
//   LitePullRig NAMESRV OUT.jsonl SPEC [SPEC...]
//
// One consumer per SPEC, all in this JVM. SPEC: `key=value` pairs separated by `;`:
//   group=G          consumer group (required)
//   topic=T          the topic (required)
//   instance=NAME    instanceName (required): client id 127.0.0.1@NAME@STREAM
//   assign=b:0,b:1   assign() those queues of T instead of subscribe(T, "*")
//   stall=SECONDS    the application stops calling poll() that long after the start (its
//                    state lines go on): what a stuck stream job looks like
//
// Every second each consumer appends a state line to OUT: its client id, what it holds (its
// own table of assigned queues, read by reflection: `assignedMessageQueue` of its impl, in
// 4.9.8 and 5.x alike) and how many messages it has polled. Offsets are committed by the
// client's auto-commit (every second).
import java.io.FileWriter;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.message.MessageQueue;

public class LitePullRig {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String out = args[1];
        List<Thread> threads = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            Map<String, String> spec = parse(args[i]);
            DefaultLitePullConsumer consumer = start(namesrv, spec);
            Runtime.getRuntime().addShutdownHook(new Thread(consumer::shutdown));
            long stallAt = spec.containsKey("stall")
                ? System.currentTimeMillis() + (long) (Double.parseDouble(spec.get("stall")) * 1000)
                : Long.MAX_VALUE;
            Thread loop = new Thread(() -> poll(consumer, out, stallAt));
            loop.setDaemon(true);
            loop.start();
            threads.add(loop);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static Map<String, String> parse(String text) {
        Map<String, String> spec = new HashMap<>();
        for (String pair : text.split(";")) {
            int eq = pair.indexOf('=');
            spec.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return spec;
    }

    static DefaultLitePullConsumer start(String namesrv, Map<String, String> spec) throws Exception {
        String topic = spec.get("topic");
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(spec.get("group"));
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName(spec.get("instance"));
        consumer.setClientIP("127.0.0.1");
        consumer.setPollNameServerInterval(1000);
        consumer.setHeartbeatBrokerInterval(1000);
        consumer.setAutoCommitIntervalMillis(1000);
        String assign = spec.get("assign");
        if (assign == null) {
            consumer.subscribe(topic, "*");
        }
        consumer.start();
        if (assign != null) {
            List<MessageQueue> chosen = new ArrayList<>();
            for (String ref : assign.split(",")) {
                int colon = ref.lastIndexOf(':');
                chosen.add(new MessageQueue(topic, ref.substring(0, colon),
                    Integer.parseInt(ref.substring(colon + 1))));
            }
            consumer.assign(chosen);
        }
        return consumer;
    }

    static void poll(DefaultLitePullConsumer consumer, String out, long stallAt) {
        long polled = 0;
        long next = 0;
        while (true) {
            try {
                if (System.currentTimeMillis() < stallAt) {
                    polled += consumer.poll(200).size();
                } else {
                    Thread.sleep(200);
                }
                long now = System.currentTimeMillis();
                if (now >= next) {
                    write(out, state(consumer, polled, now));
                    next = now + 1000;
                }
            } catch (Exception e) {
                return;  // shut down
            }
        }
    }

    /** The queues the consumer holds now: its impl's assignedMessageQueue table. */
    static Collection<MessageQueue> held(DefaultLitePullConsumer consumer) throws Exception {
        Field implField = DefaultLitePullConsumer.class.getDeclaredField("defaultLitePullConsumerImpl");
        implField.setAccessible(true);
        Object impl = implField.get(consumer);
        Field assignedField = impl.getClass().getDeclaredField("assignedMessageQueue");
        assignedField.setAccessible(true);
        Object assigned = assignedField.get(impl);
        Method queues = assigned.getClass().getMethod("getAssignedMessageQueues");
        @SuppressWarnings("unchecked")
        Collection<MessageQueue> mqs = (Collection<MessageQueue>) queues.invoke(assigned);
        return mqs;
    }

    static String state(DefaultLitePullConsumer consumer, long polled, long ts) throws Exception {
        TreeSet<String> refs = new TreeSet<>();
        for (MessageQueue mq : held(consumer)) {
            refs.add("{\"topic\":\"" + mq.getTopic() + "\",\"brokerName\":\"" + mq.getBrokerName()
                + "\",\"queueId\":" + mq.getQueueId() + "}");
        }
        return "{\"event\":\"state\",\"ts\":" + ts + ",\"group\":\"" + consumer.getConsumerGroup()
            + "\",\"clientId\":\"" + consumer.buildMQClientId() + "\",\"polled\":" + polled
            + ",\"held\":[" + String.join(",", refs) + "]}";
    }

    static synchronized void write(String out, String line) throws IOException {
        try (FileWriter w = new FileWriter(out, true)) {
            w.write(line + "\n");
        }
    }
}
