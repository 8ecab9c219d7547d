package dev.ledgerline.devstack.token;

import io.smallrye.jwt.build.Jwt;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Duration;
import java.util.Set;

/**
 * Dev and test only (absent from a prod build): mints a token signed with the checked-in dev key, so a
 * developer can call the API with nothing but curl.
 */
@Path("/dev/tokens")
public class DevTokenResource {

    public record TokenRequest(
            @NotBlank @Size(max = 128) @Pattern(regexp = "[\\x21-\\x7e]+") String subject,
            @NotNull @Size(max = 16) Set<@Pattern(regexp = "[a-z.]{1,64}") String> groups) {
    }

    public record TokenResponse(String token) {
    }

    @ConfigProperty(name = "mp.jwt.verify.issuer")
    String issuer;

    @ConfigProperty(name = "mp.jwt.verify.audiences")
    String audience;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public TokenResponse mint(@Valid @NotNull TokenRequest request) {
        String token = Jwt.issuer(issuer)
                .audience(audience)
                .subject(request.subject())
                .groups(request.groups())
                .expiresIn(Duration.ofHours(1))
                .sign();
        return new TokenResponse(token);
    }
}
