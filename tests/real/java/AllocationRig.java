// The allocation of the real Java classes, for rmqlb's differential test: run by the JVM's
// source launcher against the client (and, on 5.x, broker) jars of the kit's version.
//
//   AllocationRig CASES.jsonl ANSWERS.jsonl
//
// One case per line, one answer per line, in order. A case:
//   {"kind": "client", "queues": [[topic, broker, id]...], "consumers": [cid...],
//    "strategy": {...}}
//     as RebalanceImpl does: queues and client ids sorted (Collections.sort), the strategy
//     built, then allocate() once per distinct client id, in sorted order. Answer:
//     {"expected": {cid: [[topic, broker, id]...]}} in the order Java returned them, or
//     {"error": [exception class, message]} for the first throw (the constructor's too).
//     strategy: {"name": "AVG" | "AVG_BY_CIRCLE"} | {"name": "CONSISTENT_HASH",
//     "virtualNodeCnt": N} | {"name": "MACHINE_ROOM", "consumeridcs": [...]} |
//     {"name": "MACHINE_ROOM_NEARBY", "inner": {...}, "brokerRooms": {broker: room},
//     "consumerRooms": {cid: room}} | {"name": "CONFIG", "config": {cid: [queue...]}}
//     (AllocateMessageQueueByConfig's list is set to the client's own before its call).
//   {"kind": "broker", "queues": [...], "consumers": [...], "strategy": "AVG" | ...,
//    "pop": SHARE or null, "ask": [cid...]}
//     QueryAssignmentProcessor's CLUSTERING load balance once its route and consumer list
//     are read: the strategy looked up among the two it registers (another name: no
//     assignment), allocate4Pop when "pop" is a share number, else the strategy's
//     allocate(), anything thrown: no assignment. Answer: {"assigned": {cid: [queue...] or
//     null}}, each list sorted and distinct (the processor's HashSet).
//
// Output is ASCII (non-ASCII characters escaped), so client ids round-trip whatever they hold.
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import com.alibaba.fastjson.serializer.SerializerFeature;

import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMachineRoomNearby;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByConfig;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByMachineRoom;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.message.MessageQueue;

public class AllocationRig {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[1]), StandardCharsets.UTF_8))) {
            for (String line : lines) {
                if (line.isEmpty()) {
                    continue;
                }
                JSONObject c = JSON.parseObject(line);
                JSONObject answer = "broker".equals(c.getString("kind")) ? broker(c) : client(c);
                out.println(JSON.toJSONString(answer, SerializerFeature.BrowserCompatible,
                    SerializerFeature.DisableCircularReferenceDetect, SerializerFeature.WriteMapNullValue));
            }
        }
    }

    static List<MessageQueue> queues(JSONArray raw) {
        List<MessageQueue> out = new ArrayList<>();
        if (raw == null) {
            return out;
        }
        for (int i = 0; i < raw.size(); i++) {
            JSONArray q = raw.getJSONArray(i);
            out.add(new MessageQueue(q.getString(0), q.getString(1), q.getIntValue(2)));
        }
        return out;
    }

    static JSONArray json(List<MessageQueue> queues) {
        JSONArray out = new JSONArray();
        for (MessageQueue mq : queues) {
            JSONArray q = new JSONArray();
            q.add(mq.getTopic());
            q.add(mq.getBrokerName());
            q.add(mq.getQueueId());
            out.add(q);
        }
        return out;
    }

    static List<String> strings(JSONArray raw) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < raw.size(); i++) {
            out.add(raw.getString(i));
        }
        return out;
    }

    static AllocateMessageQueueStrategy strategy(JSONObject s) {
        switch (s.getString("name")) {
            case "AVG":
                return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE":
                return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH":
                return new AllocateMessageQueueConsistentHash(s.getIntValue("virtualNodeCnt"));
            case "MACHINE_ROOM": {
                AllocateMessageQueueByMachineRoom room = new AllocateMessageQueueByMachineRoom();
                room.setConsumeridcs(new HashSet<>(strings(s.getJSONArray("consumeridcs"))));
                return room;
            }
            case "MACHINE_ROOM_NEARBY": {
                final JSONObject brokers = s.getJSONObject("brokerRooms");
                final JSONObject consumers = s.getJSONObject("consumerRooms");
                AllocateMachineRoomNearby.MachineRoomResolver resolver =
                    new AllocateMachineRoomNearby.MachineRoomResolver() {
                        public String brokerDeployIn(MessageQueue mq) {
                            return brokers.getString(mq.getBrokerName());
                        }

                        public String consumerDeployIn(String clientID) {
                            return consumers.getString(clientID);
                        }
                    };
                return new AllocateMachineRoomNearby(strategy(s.getJSONObject("inner")), resolver);
            }
            case "CONFIG":
                return new AllocateMessageQueueByConfig();
            default:
                throw new IllegalStateException("unknown strategy " + s);
        }
    }

    static JSONObject client(JSONObject c) {
        JSONObject answer = new JSONObject();
        List<MessageQueue> mqAll = queues(c.getJSONArray("queues"));
        List<String> cidAll = strings(c.getJSONArray("consumers"));
        Collections.sort(mqAll);
        Collections.sort(cidAll);
        JSONObject spec = c.getJSONObject("strategy");
        Map<String, Object> expected = new LinkedHashMap<>();
        try {
            AllocateMessageQueueStrategy strategy = strategy(spec);
            for (String cid : new LinkedHashSet<>(cidAll)) {
                if (strategy instanceof AllocateMessageQueueByConfig) {
                    JSONArray own = spec.getJSONObject("config").getJSONArray(cid);
                    ((AllocateMessageQueueByConfig) strategy).setMessageQueueList(queues(own));
                }
                expected.put(cid, json(strategy.allocate("G", cid, mqAll, cidAll)));
            }
        } catch (RuntimeException e) {
            JSONArray error = new JSONArray();
            error.add(e.getClass().getName());
            error.add(e.getMessage());
            answer.put("error", error);
            return answer;
        }
        answer.put("expected", expected);
        return answer;
    }

    static JSONObject broker(JSONObject c) throws ReflectiveOperationException {
        List<MessageQueue> mqAll = new ArrayList<>(new HashSet<>(queues(c.getJSONArray("queues"))));
        List<String> cidAll = strings(c.getJSONArray("consumers"));
        Collections.sort(mqAll);
        Collections.sort(cidAll);
        String name = c.getString("strategy");
        Integer share = c.getInteger("pop");
        // the processor's two strategies, by getName(), as it registers them
        Map<String, AllocateMessageQueueStrategy> registered = new LinkedHashMap<>();
        for (AllocateMessageQueueStrategy s : new AllocateMessageQueueStrategy[] {
            new AllocateMessageQueueAveragely(), new AllocateMessageQueueAveragelyByCircle()}) {
            registered.put(s.getName(), s);
        }
        AllocateMessageQueueStrategy strategy = registered.get(name);
        Map<String, Object> assigned = new LinkedHashMap<>();
        for (String cid : strings(c.getJSONArray("ask"))) {
            List<MessageQueue> result;
            try {
                if (strategy == null) {
                    result = null;
                } else if (share != null) {
                    result = allocate4Pop(strategy, cid, mqAll, cidAll, share);
                } else {
                    result = strategy.allocate("G", cid, mqAll, cidAll);
                }
            } catch (RuntimeException | Thrown e) {
                result = null;
            }
            if (result == null) {
                assigned.put(cid, null);
            } else {
                List<MessageQueue> distinct = new ArrayList<>(new TreeSet<>(result));
                assigned.put(cid, json(distinct));
            }
        }
        JSONObject answer = new JSONObject();
        answer.put("assigned", assigned);
        return answer;
    }

    /** What allocate4Pop threw (anything else the rig does wrong stops it). */
    static class Thrown extends Exception {
        Thrown(Throwable cause) {
            super(cause);
        }
    }

    // QueryAssignmentProcessor.allocate4Pop, called on an instance made without its
    // constructor (which wants a running broker): the method reads no field of it.
    static Object processor;
    static Method allocate4Pop;

    @SuppressWarnings("unchecked")
    static List<MessageQueue> allocate4Pop(AllocateMessageQueueStrategy strategy, String cid,
        List<MessageQueue> mqAll, List<String> cidAll, int share) throws ReflectiveOperationException, Thrown {
        if (processor == null) {
            Class<?> type = Class.forName("org.apache.rocketmq.broker.processor.QueryAssignmentProcessor");
            Field unsafeField = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
            unsafeField.setAccessible(true);
            Object unsafe = unsafeField.get(null);
            processor = unsafe.getClass().getMethod("allocateInstance", Class.class).invoke(unsafe, type);
            allocate4Pop = type.getMethod("allocate4Pop", AllocateMessageQueueStrategy.class,
                String.class, String.class, List.class, List.class, int.class);
        }
        try {
            return (List<MessageQueue>) allocate4Pop.invoke(processor, strategy, "G", cid, mqAll, cidAll, share);
        } catch (InvocationTargetException e) {
            throw new Thrown(e.getCause());
        }
    }
}
