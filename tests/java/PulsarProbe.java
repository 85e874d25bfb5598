/*
 * Asks the Java libraries a Pulsar broker runs what they make of a schema, so that this project's answers can be
 * checked against them again on a later release (tests/unit/test_java_probe.py, marked `java`).
 *
 * Written for this project: it calls the public APIs of Avro, Jackson and protobuf-java the way Pulsar's broker
 * calls them (class and method names in the comments), and copies no code from any of them.
 *
 * The protobuf classes are named `com.google.protobuf` here; the test rewrites that package to the shaded copy it
 * compiles against (protobuf-java 3.25 inside ORC's jars for Pulsar 3.0 and 4.0, protobuf-java 4.33 inside Spark's
 * for master), so one source serves both runtimes.
 *
 * Protocol: one JSON object a line on stdin, one JSON answer a line on stdout.
 *   {"probe": "protobuf_native", "data": TEXT, "exact": BOOL}
 *       ProtobufNativeSchemaUtils.deserialize + ProtobufNativeSchemaDataValidator.validate: Jackson reads the
 *       document as ObjectMapperFactory's mapper does, FileDescriptor.buildFrom builds each file after its
 *       dependencies, then the root is looked up (exact: master's rule; else 3.0/4.0's removeFirst rule).
 *       -> {"accepted": BOOL, "root": NAME|null, "error": TEXT|null, "cause": TEXT|null}
 *   {"probe": "avro", "existing": [TEXT...], "candidate": TEXT, "strategy": NAME}
 *       AvroSchemaBasedCompatibilityCheck.checkCompatible: parse without default validation, then Avro's
 *       SchemaValidatorBuilder (canRead / canBeRead / mutualRead, latest or all).
 *       -> {"verdict": "compatible"|"incompatible"|"internal error", "error": TEXT|null}
 *   {"probe": "avro_parse", "schema": TEXT}
 *       SchemaRegistryServiceImpl.getSchemaVersionBySchemaData's parse: `new Schema.Parser().parse(text)`, defaults
 *       validated. -> {"parsed": BOOL, "error": TEXT|null, "runtime_exception": BOOL}
 *   {"probe": "versions"} -> {"protobuf": TEXT, "avro": TEXT, "jackson": TEXT}
 */

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.SchemaValidationException;
import org.apache.avro.SchemaValidator;
import org.apache.avro.SchemaValidatorBuilder;

public class PulsarProbe {

    /** The shape of Pulsar's ProtobufNativeSchemaData (a Lombok bean: no-argument constructor, getters, setters). */
    public static class NativeDocument {
        private byte[] fileDescriptorSet;
        private String rootMessageTypeName;
        private String rootFileDescriptorName;

        public byte[] getFileDescriptorSet() { return fileDescriptorSet; }
        public void setFileDescriptorSet(byte[] value) { fileDescriptorSet = value; }
        public String getRootMessageTypeName() { return rootMessageTypeName; }
        public void setRootMessageTypeName(String value) { rootMessageTypeName = value; }
        public String getRootFileDescriptorName() { return rootFileDescriptorName; }
        public void setRootFileDescriptorName(String value) { rootFileDescriptorName = value; }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    // ObjectMapperFactory.configureObjectMapper: unknown properties ignored, unknown enum values read as null.
    private static final ObjectReader DOCUMENT_READER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .configure(DeserializationFeature.READ_UNKNOWN_ENUM_VALUES_AS_NULL, true)
            .reader()
            .forType(NativeDocument.class);

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode request = JSON.readTree(line);
            ObjectNode answer;
            switch (request.path("probe").asText()) {
                case "protobuf_native":
                    answer = protobufNative(request.path("data").asText(), request.path("exact").asBoolean());
                    break;
                case "avro":
                    answer = avro(request);
                    break;
                case "avro_parse":
                    answer = avroParse(request.path("schema").asText());
                    break;
                case "versions":
                    answer = versions();
                    break;
                default:
                    answer = JSON.createObjectNode().put("error", "unknown probe: " + request.path("probe"));
            }
            System.out.println(JSON.writeValueAsString(answer));
            System.out.flush();
        }
    }

    private static ObjectNode versions() {
        ObjectNode answer = JSON.createObjectNode();
        answer.put("protobuf", runtimeVersion());
        answer.put("avro", String.valueOf(Schema.class.getPackage().getImplementationVersion()));
        answer.put("jackson", com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString());
        return answer;
    }

    /** protobuf-java 4 names its version in RuntimeVersion; 3.x has no such class. */
    private static String runtimeVersion() {
        String pkg = Descriptors.class.getPackageName();
        try {
            Class<?> runtime = Class.forName(pkg + ".RuntimeVersion");
            return runtime.getField("OSS_MAJOR").get(null) + "." + runtime.getField("OSS_MINOR").get(null) + "."
                    + runtime.getField("OSS_PATCH").get(null);
        } catch (ReflectiveOperationException e) {
            return "3.x";
        }
    }

    // ----------------------------------------------------------------------------------------- PROTOBUF_NATIVE

    private static ObjectNode protobufNative(String data, boolean exact) {
        ObjectNode answer = JSON.createObjectNode();
        Descriptors.Descriptor root;
        try {
            root = deserialize(data.getBytes(StandardCharsets.UTF_8), exact);
        } catch (StackOverflowError e) {
            // Not an Exception: it escapes ProtobufNativeSchemaDataValidator's catch, an internal error (500).
            answer.put("accepted", false);
            answer.putNull("root");
            answer.put("error", "internal error");
            answer.put("cause", "StackOverflowError");
            return answer;
        } catch (Exception e) {
            // ProtobufNativeSchemaDataValidator: any exception is "deserialize ProtobufNative Schema failed".
            answer.put("accepted", false);
            answer.putNull("root");
            answer.put("error", "deserialize ProtobufNative Schema failed");
            Throwable cause = e instanceof ProbeFailure && e.getCause() != null ? e.getCause() : e;
            answer.put("cause", cause.getClass().getSimpleName() + ": " + cause.getMessage());
            return answer;
        }
        if (root == null) {
            answer.put("accepted", false);
            answer.putNull("root");
            answer.put("error", "protobuf root message descriptor is null");
            answer.putNull("cause");
            return answer;
        }
        answer.put("accepted", true);
        answer.put("root", root.getFullName());
        answer.putNull("error");
        answer.putNull("cause");
        return answer;
    }

    /** A failure of the deserialisation itself, carrying the library's exception as its cause. */
    private static final class ProbeFailure extends Exception {
        ProbeFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static Descriptors.Descriptor deserialize(byte[] bytes, boolean exact) throws Exception {
        NativeDocument doc = DOCUMENT_READER.readValue(bytes);
        FileDescriptorSet set = FileDescriptorSet.parseFrom(doc.getFileDescriptorSet());
        Map<String, FileDescriptorProto> protos = new HashMap<>();
        for (FileDescriptorProto file : set.getFileList()) {
            protos.put(file.getName(), file);
        }
        FileDescriptorProto rootProto = protos.get(doc.getRootFileDescriptorName());
        if (exact && rootProto == null) {
            throw new ProbeFailure("Missing root file descriptor", null);
        }
        Map<String, Descriptors.FileDescriptor> built = new HashMap<>();
        build(rootProto, built, protos, new HashSet<>(), exact);
        Descriptors.FileDescriptor file = built.get(doc.getRootFileDescriptorName());
        String name = doc.getRootMessageTypeName();
        String[] path;
        if (exact) {
            // master: the name must lie inside the file's package and name the message found exactly.
            String prefix = file.getPackage().isEmpty() ? "" : file.getPackage() + ".";
            if (name == null || !name.startsWith(prefix) || name.length() == prefix.length()) {
                throw new ProbeFailure("Root message is outside its descriptor package", null);
            }
            path = name.substring(prefix.length()).split("\\.");
        } else {
            // 3.0/4.0: StringUtils.removeFirst(name, package) (the package read as a regular expression), then
            // the first '.' dropped.
            String rest = file.getPackage().isEmpty() ? name : name.replaceFirst(file.getPackage(), "");
            path = rest.replaceFirst("\\.", "").split("\\.");
        }
        Descriptors.Descriptor found = file.findMessageTypeByName(path[0]);
        for (int i = 1; i < path.length; i++) {
            if (found == null) {
                if (exact) {
                    throw new ProbeFailure("Root message was not found", null);
                }
                throw new NullPointerException("findNestedTypeByName on a missing message");
            }
            found = found.findNestedTypeByName(path[i]);
        }
        if (exact && (found == null || !found.getFullName().equals(name))) {
            throw new ProbeFailure("Root message was not found", null);
        }
        return found;
    }

    /** Each file built with Descriptors.FileDescriptor.buildFrom(proto, dependencies), dependencies first. */
    private static void build(FileDescriptorProto proto, Map<String, Descriptors.FileDescriptor> built,
            Map<String, FileDescriptorProto> protos, Set<String> visiting, boolean exact) throws Exception {
        if (proto == null) {
            if (exact) {
                throw new ProbeFailure("Missing imported file descriptor", null);
            }
            throw new NullPointerException("a file descriptor the set does not hold");
        }
        if (exact && !visiting.add(proto.getName())) {
            throw new ProbeFailure("Cyclic file descriptor imports", null);
        }
        for (String dependency : proto.getDependencyList()) {
            if (!built.containsKey(dependency)) {
                build(protos.get(dependency), built, protos, visiting, exact);
            }
        }
        List<Descriptors.FileDescriptor> dependencies = new ArrayList<>();
        for (String dependency : proto.getDependencyList()) {
            Descriptors.FileDescriptor found = built.get(dependency);
            if (found == null) {
                throw new ProbeFailure("'" + proto.getName() + "' can't resolve dependency '" + dependency + "'", null);
            }
            dependencies.add(found);
        }
        try {
            Descriptors.FileDescriptor file = Descriptors.FileDescriptor.buildFrom(
                    proto, dependencies.toArray(new Descriptors.FileDescriptor[0]));
            built.put(file.getFullName(), file);
            visiting.remove(proto.getName());
        } catch (Descriptors.DescriptorValidationException e) {
            throw new ProbeFailure("buildFrom", e);
        }
    }

    // ----------------------------------------------------------------------------------------------------- AVRO

    private static ObjectNode avro(JsonNode request) {
        ObjectNode answer = JSON.createObjectNode();
        try {
            LinkedList<Schema> existing = new LinkedList<>();
            for (JsonNode text : request.path("existing")) {
                existing.addFirst(parser().parse(text.asText()));  // newest first, as the broker orders them
            }
            Schema candidate = parser().parse(request.path("candidate").asText());
            validator(request.path("strategy").asText()).validate(candidate, existing);
            answer.put("verdict", "compatible");
            answer.putNull("error");
        } catch (org.apache.avro.SchemaParseException | SchemaValidationException e) {
            answer.put("verdict", "incompatible");
            answer.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        } catch (RuntimeException e) {
            // Not converted by AvroSchemaBasedCompatibilityCheck: the broker answers with an internal error.
            answer.put("verdict", "internal error");
            answer.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return answer;
    }

    private static ObjectNode avroParse(String text) {
        ObjectNode answer = JSON.createObjectNode();
        try {
            new Schema.Parser().parse(text);
            answer.put("parsed", true);
            answer.putNull("error");
            answer.put("runtime_exception", false);
        } catch (Exception e) {
            answer.put("parsed", false);
            answer.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            answer.put("runtime_exception", e instanceof RuntimeException);
        }
        return answer;
    }

    private static Schema.Parser parser() {
        Schema.Parser parser = new Schema.Parser();
        parser.setValidateDefaults(false);
        return parser;
    }

    private static SchemaValidator validator(String strategy) {
        SchemaValidatorBuilder builder = new SchemaValidatorBuilder();
        switch (strategy) {
            case "BACKWARD":
                return builder.canReadStrategy().validateLatest();
            case "BACKWARD_TRANSITIVE":
                return builder.canReadStrategy().validateAll();
            case "FORWARD":
                return builder.canBeReadStrategy().validateLatest();
            case "FORWARD_TRANSITIVE":
                return builder.canBeReadStrategy().validateAll();
            case "FULL":
                return builder.mutualReadStrategy().validateLatest();
            case "FULL_TRANSITIVE":
                return builder.mutualReadStrategy().validateAll();
            default:
                throw new IllegalArgumentException("no Avro validator for strategy " + strategy);
        }
    }
}
