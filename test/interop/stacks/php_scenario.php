<?php
/*
 * The interop scenario with PHP's ext/soap (Debian php-cli, php-soap), from the WSDLs alone.
 *
 * Usage: php php_scenario.php '{"base": "http://127.0.0.1:PORT", "terms": "<wsag:All ...>"}'
 * Prints one JSON line: what PHP saw at each step (test/interop/soap-stacks.test.ts checks it).
 *
 * ext/soap reads the SOAP 1.1 view of each WSDL. Answers are typed from the WSDLs: resource
 * property documents, EPRs and their reference parameters, counter-offers, quotes, faults (a
 * wildcard's content comes back under "any", keyed by element name). The reference parameter
 * goes back as a SoapHeader. Two wildcards are filled by hand: the terms' content (wsag:Terms,
 * as XML) and the accepting offer's wsag-neg:NegotiationExtension (a typed SoapVar that names
 * its element and namespace).
 */
const WSAG = 'http://schemas.ggf.org/graap/2007/03/ws-agreement';
const NEG = 'http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation';
const SRV = 'http://schemas.wsag-server.org/2026/11/server';
const WSA = 'http://www.w3.org/2005/08/addressing';
const PORTS = ['AgreementFactory', 'PendingAgreementFactory', 'AgreementAcceptance', 'Agreement', 'AgreementState',
    'NegotiationFactory', 'Negotiation'];

function main(string $base, string $terms): array {
    $result = ['stack' => 'php'];
    $warnings = [];
    set_error_handler(function (int $level, string $message) use (&$warnings) {
        $warnings[] = $message;
        return true;
    });
    $clients = [];
    foreach (PORTS as $port) {
        $clients[$port] = new SoapClient("$base/wsag/$port?wsdl&soap=1.1", [
            'trace' => true, 'exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE,
            'features' => SOAP_SINGLE_ELEMENT_ARRAYS,
        ]);
    }
    $result['loaded'] = array_keys($clients);
    sort($result['loaded']);
    $result['warnings'] = $warnings;

    $factory = $clients['AgreementFactory'];
    $templates = $factory->GetResourcePropertyDocument(new stdClass())->any['AgreementFactoryProperties']->Template;
    $result['templates'] = array_map(fn($t) => $t->Name, $templates);
    sort($result['templates']);
    $template = array_values(array_filter($templates, fn($t) => $t->Name === 'advance-reservation'))[0];
    $termsXml = new SoapVar('<wsag:Terms xmlns:wsag="' . WSAG . "\">$terms</wsag:Terms>", XSD_ANYXML);

    $context = fn(object $c, array $extra = []) => array_merge(array_filter([
        'AgreementInitiator' => $c->AgreementInitiator ?? null,
        'AgreementResponder' => $c->AgreementResponder ?? null,
        'ServiceProvider' => $c->ServiceProvider,
        'TemplateId' => $c->TemplateId,
        'TemplateName' => $c->TemplateName,
    ]), $extra);
    $addressed = function (SoapClient $client, string $name, string $id): SoapClient {
        $client->__setSoapHeaders([new SoapHeader(SRV, $name, $id)]);
        return $client;
    };
    $referenceParameter = fn(object $epr, string $name) => $epr->ReferenceParameters->any[$name]->_;
    $state = fn(string $id) => $addressed($clients['AgreementState'], 'AgreementId', $id)
        ->GetResourcePropertyDocument(new stdClass())->any['AgreementStateProperties']->AgreementState->State;

    // One-shot: create, read the state through the reference parameter header, terminate.
    $created = $factory->CreateAgreement(['AgreementOffer' => [
        'Name' => $template->Name, 'Context' => $context($template->Context), 'Terms' => $termsXml,
    ]])->CreatedAgreementEPR;
    $agreementId = $referenceParameter($created, 'AgreementId');
    $result['created'] = ['address' => $created->Address->_, 'state' => $state($agreementId)];
    $reason = ['any' => new SoapVar('ended by the PHP interop test', XSD_STRING, null, null, 'Reason', SRV)];
    $addressed($clients['Agreement'], 'AgreementId', $agreementId)->Terminate($reason);
    $result['terminated'] = $state($agreementId);

    // Negotiation: Advisory slots with their quotes, a Solicited offer held, accepted.
    $epr = $clients['NegotiationFactory']->InitiateNegotiation(['NegotiationContext' => [
        'NegotiationType' => ['Negotiation' => new stdClass()], 'AgreementResponder' => 'NegotiationResponder',
    ]])->CreatedNegotiationEPR;
    $negotiation = $addressed($clients['Negotiation'], 'NegotiationId', $referenceParameter($epr, 'NegotiationId'));
    $offer = fn(string $counterOfferTo, string $offerState) => ['NegotiationOffer' => [[
        'Name' => $template->Name,
        'Context' => $context($template->Context),
        'Terms' => $termsXml,
        'NegotiationOfferContext' => [
            'CounterOfferTo' => $counterOfferTo, 'Creator' => 'NegotiationInitiator',
            'State' => [$offerState => new stdClass()],
        ],
        'NegotiationConstraints' => new stdClass(),
    ]]];
    $summary = function (object $counterOffer): array {
        $c = $counterOffer->NegotiationOfferContext;
        $quote = $c->any['Quote'] ?? null;
        $price = $quote ? (is_array($quote->Price) ? $quote->Price[0] : $quote->Price) : null;
        return [
            'offerId' => $counterOffer->OfferId,
            'state' => array_keys((array) $c->State)[0] ?? null,
            'expirationTime' => $c->ExpirationTime ?? null,
            'price' => $price ? ['amount' => (float) $price->_, 'currency' => $price->Currency] : null,
        ];
    };
    $advisory = array_map($summary, $negotiation->Negotiate($offer($template->Context->TemplateId, 'Advisory'))
        ->NegotiationCounterOffer);
    $result['advisory'] = $advisory;
    $acceptable = $negotiation->Negotiate($offer($advisory[0]['offerId'], 'Solicited'))->NegotiationCounterOffer[0];
    $result['solicited'] = $summary($acceptable);

    $extension = new SoapVar(['NegotiationOfferContext' => new SoapVar([
        'CounterOfferTo' => new SoapVar($acceptable->OfferId, XSD_STRING, null, null, 'CounterOfferTo', NEG),
        'Creator' => new SoapVar('NegotiationInitiator', XSD_STRING, null, null, 'Creator', NEG),
        'State' => new SoapVar(['Acceptable' => new SoapVar(new stdClass(), SOAP_ENC_OBJECT, null, null, 'Acceptable', NEG)],
            SOAP_ENC_OBJECT, null, null, 'State', NEG),
    ], SOAP_ENC_OBJECT, null, null, 'NegotiationOfferContext', NEG)], SOAP_ENC_OBJECT, null, null, 'NegotiationExtension', NEG);
    $accepted = $factory->CreateAgreement(['AgreementOffer' => [
        'Name' => $acceptable->Name,
        'Context' => $context($acceptable->Context, ['any' => $extension]),
        'Terms' => $termsXml,
    ]])->CreatedAgreementEPR;
    $acceptedId = $referenceParameter($accepted, 'AgreementId');
    $result['accepted'] = ['agreementId' => $acceptedId, 'state' => $state($acceptedId)];

    // A typed fault: the BaseFault detail as the WSDL declares it.
    try {
        $addressed($clients['Agreement'], 'AgreementId', 'no-such-agreement')->Terminate($reason);
        $result['fault'] = null;
    } catch (SoapFault $fault) {
        $result['fault'] = ['code' => $fault->detail->BaseFault->ErrorCode->_ ?? $fault->detail->BaseFault->ErrorCode];
    }
    restore_error_handler();
    return $result;
}

$arguments = json_decode($argv[1], true);
try {
    echo json_encode(main($arguments['base'], $arguments['terms'])), "\n";
} catch (Throwable $error) {
    echo json_encode(['stack' => 'php', 'error' => get_class($error) . ': ' . $error->getMessage()]), "\n";
    exit(1);
}
