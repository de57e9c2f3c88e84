package provider

import (
	"context"

	"bokat/internal/notify"
	"bokat/internal/web"
)

// Mail sends a message (*notify.Mailer: SMTP, or .eml files in
// development). Implementations must not log the address.
type Mail interface {
	Send(ctx context.Context, msg notify.Message) error
}

// invitationMessage is the e-mail that tells an invited person where to
// sign in, in the inviter's page language.
func invitationMessage(email, providerName, signInURL, lang string) notify.Message {
	msg := notify.Message{Kind: "provider.invitation", To: email}
	if lang == web.EN {
		msg.Subject = "You are invited to " + providerName + " on Bokat"
		msg.Text = "Hello,\n\nyou are invited to see and handle the bookings of " + providerName + " on Bokat.\n\n" +
			"Sign in with this e-mail address at\n\n    " + signInURL + "\n\n" +
			"and we will send you a one-time code. The invitation is valid for 14 days.\n" +
			"If you did not expect this, you can ignore this message.\n\nBokat\n"
		return msg
	}
	msg.Subject = "Du är inbjuden till " + providerName + " i Bokat"
	msg.Text = "Hej,\n\ndu är inbjuden att se och hantera bokningarna för " + providerName + " i Bokat.\n\n" +
		"Logga in med den här e-postadressen på\n\n    " + signInURL + "\n\n" +
		"så skickar vi en engångskod. Inbjudan gäller i 14 dagar.\n" +
		"Om du inte väntade dig det här kan du bortse från meddelandet.\n\nBokat\n"
	return msg
}
